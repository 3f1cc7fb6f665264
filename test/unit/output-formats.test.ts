/**
 * `ask`'s output formats as pure mappings (client/output-formats.ts), its option checks and prompt
 * reading (client/commands/ask.ts), and the prompt size limit (client/prompt-limits.ts).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { outputFormatFrom, readAskPrompt, sessionLimitsFrom } from '../../client/commands/ask';
import { formatFinalOutput, sdkMessagesFor, systemInitMessage } from '../../client/output-formats';
import { MAX_PROMPT_BYTES, PromptTooLargeError, checkPromptSize } from '../../client/prompt-limits';
import { UsageError } from '../../client/usage-error';
import type { ResultMessage } from '../../common/result';

const result = { type: 'result', subtype: 'success', is_error: false, result: 'Done.\nTwo lines.', session_id: 's' } as unknown as ResultMessage;
const io = (stdin?: NodeJS.ReadableStream & { isTTY?: boolean }) => {
  const err: string[] = [];
  return { out: () => {}, err: (text: string) => err.push(text), stdin, errors: err };
};

describe('output formats', () => {
  it('text prints the answer, json the result on one line', () => {
    expect(formatFinalOutput('text', result)).toBe('Done.\nTwo lines.');
    const json = formatFinalOutput('json', result);
    expect(json.split('\n')).toHaveLength(1);
    expect(JSON.parse(json)).toEqual(result);
  });

  it('maps events onto SDK messages, leaving out what Claude Code keeps to itself', () => {
    const assistant = {
      type: 'assistant',
      uuid: 'a1',
      message: { id: 'm', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: {} },
    };
    expect(sdkMessagesFor({ seq: 1, message: assistant } as never, 's')).toEqual([
      { type: 'assistant', message: { type: 'message', ...assistant.message }, parent_tool_use_id: null, uuid: 'a1', session_id: 's' },
    ]);
    const toolResult = { type: 'user', uuid: 'u1', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] } };
    expect(sdkMessagesFor({ seq: 2, message: toolResult } as never, 's')).toEqual([
      { type: 'user', message: toolResult.message, parent_tool_use_id: null, uuid: 'u1', session_id: 's' },
    ]);
    const nudge = { type: 'user', uuid: 'u2', isMeta: true, message: { role: 'user', content: 'go on' } };
    expect(sdkMessagesFor({ seq: 3, message: nudge } as never, 's')[0]).toMatchObject({ isSynthetic: true });
    const boundary = { type: 'compact_boundary', uuid: 'b', trigger: 'reactive', preTokens: 1000, postTokens: 10, messagesSummarized: 3, timestamp: 0 };
    expect(sdkMessagesFor({ seq: 4, message: boundary } as never, 's')).toEqual([
      { type: 'system', subtype: 'compact_boundary', compact_metadata: { trigger: 'auto', pre_tokens: 1000 }, uuid: 'b', session_id: 's' },
    ]);
    expect(sdkMessagesFor({ seq: 5, message: result }, 's')).toEqual([result]);
    for (const message of [
      { type: 'user_input', uuid: 'i', prompt: 'hello' },
      { type: 'system', uuid: 'w', level: 'warning', content: 'careful' },
      { type: 'tombstone', uuid: 't', target: 'a1' },
    ]) {
      expect(sdkMessagesFor({ seq: 6, message } as never, 's')).toEqual([]);
    }
  });

  it('builds the init message', () => {
    expect(systemInitMessage({ sessionId: 's', uuid: 'u', cwd: '/w', model: 'm', tools: ['Read'] })).toEqual({
      type: 'system',
      subtype: 'init',
      cwd: '/w',
      session_id: 's',
      tools: ['Read'],
      mcp_servers: [],
      model: 'm',
      permissionMode: 'default',
      slash_commands: [],
      output_style: 'default',
      agents: [],
      uuid: 'u',
    });
  });
});

describe('ask options', () => {
  it('checks --output-format and that stream-json comes with --verbose', () => {
    expect(outputFormatFrom({})).toBe('text');
    expect(outputFormatFrom({ 'output-format': 'json' })).toBe('json');
    expect(outputFormatFrom({ 'output-format': 'stream-json', verbose: true })).toBe('stream-json');
    expect(() => outputFormatFrom({ 'output-format': 'stream-json' })).toThrow(UsageError);
    expect(() => outputFormatFrom({ 'output-format': 'yaml' })).toThrow(/"text", "json" or "stream-json"/);
  });

  it('parses --max-budget-usd and --json-schema (JSON text or @file)', async () => {
    expect(sessionLimitsFrom({ 'max-budget-usd': '0.25' })).toEqual({ maxBudgetUsd: 0.25 });
    expect(sessionLimitsFrom({ 'max-budget-usd': '.5' })).toEqual({ maxBudgetUsd: 0.5 });
    for (const bad of ['0', '-1', '1e3', 'abc', '']) expect(() => sessionLimitsFrom({ 'max-budget-usd': bad })).toThrow(/positive amount/);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ask-options-'));
    await writeFile(path.join(dir, 's.json'), '{"type":"object","properties":{"a":{"type":"string"}}}');
    expect(sessionLimitsFrom({ 'json-schema': '@s.json' }, dir)).toEqual({ jsonSchema: { type: 'object', properties: { a: { type: 'string' } } } });
    expect(() => sessionLimitsFrom({ 'json-schema': '{"type":"object","required":"a"}' })).toThrow(
      /--json-schema: the schema is not valid JSON Schema \(draft 2020-12\): required/,
    );
    expect(() => sessionLimitsFrom({ 'json-schema': '@nope.json' }, dir)).toThrow(/--json-schema: cannot read .*nope\.json: no such file/);
  });
});

describe('readAskPrompt', () => {
  it('joins the argument prompt and piped stdin with a newline, as claude -p', async () => {
    expect(await readAskPrompt(['Explain', 'this:'], io(Readable.from(['piped text'])))).toBe('Explain this:\npiped text');
    expect(await readAskPrompt([], io(Readable.from(['only stdin'])))).toBe('only stdin');
    // A terminal is not read.
    const terminal = Object.assign(Readable.from(['typed']), { isTTY: true });
    expect(await readAskPrompt(['argument'], io(terminal))).toBe('argument');
    await expect(readAskPrompt([], io(Readable.from([''])))).rejects.toThrow(/the prompt is empty/);
  });

  it('reads an @file prompt', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ask-prompt-'));
    await writeFile(path.join(dir, 'task.md'), 'From the file.');
    expect(await readAskPrompt(['@task.md'], io(), dir)).toBe('From the file.');
    // Only a whole argument names a file: "@alice hello" stays text.
    expect(await readAskPrompt(['@alice', 'hello'], io(), dir)).toBe('@alice hello');
    await expect(readAskPrompt(['@missing.md'], io(), dir)).rejects.toThrow(/cannot read .*missing\.md: no such file/);
  });

  it('goes on without stdin when nothing arrives, with a warning', async () => {
    const silent = new PassThrough();
    const captured = io(silent);
    expect(await readAskPrompt(['argument'], captured)).toBe('argument');
    expect(captured.errors.join('')).toContain('nothing arrived on stdin within 3 s');
  });
});

describe('checkPromptSize', () => {
  it('refuses a prompt over the limit with its size and the limit', () => {
    expect(() => checkPromptSize('x'.repeat(MAX_PROMPT_BYTES))).not.toThrow();
    expect(() => checkPromptSize('x'.repeat(MAX_PROMPT_BYTES + 1))).toThrow(PromptTooLargeError);
    // Bytes, not characters: 700k three-byte characters are 2.1 MB.
    expect(() => checkPromptSize('€'.repeat(700_000))).toThrow('The prompt is 2.1 MB (2,100,000 bytes); the limit is 2.0 MB (2,000,000 bytes)');
  });
});

describe('the --follow result line', () => {
  it('shows the structured output under the summary', async () => {
    const { formatResultLine } = await import('../../client/format');
    const line = formatResultLine({
      ...result,
      num_turns: 2,
      duration_ms: 1500,
      total_cost_usd: 0.01,
      transitions: ['tool_use'],
      terminal_reason: 'completed',
      structured_output: { city: 'Lisbon' },
    } as ResultMessage);
    expect(line).toBe('✓ done · 2 turns · 1.5s · $0.0100\n  structured output: {"city":"Lisbon"}');
  });
});

/** The scripted model of `worker --scripted` (issue 19, item 5): plain prompts to real tool calls. */
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { DEMO_PROMPT, SCRIPTED_HELP, scriptedResponder } from '../../worker/scripted-model';

const request = (messages: unknown[]) => ({ index: 0, path: '/v1/messages', headers: {}, body: { messages }, stream: true, receivedAt: 0 }) as RecordedRequest;
const context = { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nCLAUDE.md …\n</system-reminder>' }] };
const toolUses = (turn: ReturnType<typeof scriptedResponder>) => (turn?.content ?? []).filter((block) => block.type === 'tool_use');

describe('the scripted model', () => {
  it('turns each plain command into its tool call', () => {
    const ask = (prompt: string) => toolUses(scriptedResponder(request([context, { role: 'user', content: prompt }])));
    expect(ask('read notes.txt')).toMatchObject([{ name: 'Read', input: { file_path: 'notes.txt' } }]);
    expect(ask('write out.txt hello there')).toMatchObject([{ name: 'Write', input: { file_path: 'out.txt', content: 'hello there\n' } }]);
    expect(ask('edit math.js let i = 1; => let i = 0;')).toMatchObject([
      { name: 'Edit', input: { file_path: 'math.js', old_string: 'let i = 1;', new_string: 'let i = 0;' } },
    ]);
    expect(ask('run ls -la')).toMatchObject([{ name: 'Bash', input: { command: 'ls -la' } }]);
    expect(ask('slow 5')).toMatchObject([{ name: 'Bash', input: { command: expect.stringContaining('seq 1 5') } }]);
    expect(ask('glob **/*.ts')).toMatchObject([{ name: 'Glob', input: { pattern: '**/*.ts' } }]);
    expect(ask('grep TODO')).toMatchObject([{ name: 'Grep', input: { pattern: 'TODO' } }]);
    expect(ask('agent read notes.txt')).toMatchObject([{ name: 'Agent', input: { prompt: 'read notes.txt', subagent_type: 'general-purpose' } }]);
    expect(scriptedResponder(request([{ role: 'user', content: 'hello' }]))?.content).toEqual([{ type: 'text', text: SCRIPTED_HELP }]);
  });

  it('reports what a tool returned, and plays the demo by the turn since its prompt', () => {
    const afterRead = scriptedResponder(
      request([
        { role: 'user', content: 'read notes.txt' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'alpha\nbeta' }] },
      ]),
    );
    expect(afterRead?.content).toEqual([{ type: 'text', text: 'Here is what came back:\nalpha\nbeta' }]);
    // A later prompt in the same conversation starts its own count.
    const demo = scriptedResponder(
      request([
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
        { role: 'user', content: DEMO_PROMPT },
      ]),
    );
    expect(toolUses(demo)).toMatchObject([
      { name: 'Read', input: { file_path: 'math.js' } },
      { name: 'Read', input: { file_path: 'test.js' } },
    ]);
  });
});

/** One tool-line format for every view (issue 19, item 7). */
import { describe, expect, it } from 'vitest';
import { argumentFromSummary, toolArgument, toolCallLine, toolPreview, toolResultLine, toolResultSummary } from '../../client/tool-line';
import { permissionQuestionLines } from '../../client/commands/permissions';
import { formatEvent } from '../../client/format';
import type { ConversationEvent } from '../../workflows/definitions';
import { toolCallSummary } from '../../common/tool-ui';

describe('tool lines', () => {
  it("show each call as Claude Code does, without the tool's name twice", () => {
    expect(toolCallLine('Bash', toolArgument('Bash', { command: 'touch a.txt' }))).toBe('● Bash(touch a.txt)');
    expect(toolCallLine('Write', toolArgument('Write', { file_path: 'notes.txt', content: 'x' }))).toBe('● Write(notes.txt)');
    expect(toolCallLine('Read', toolArgument('Read', { file_path: 'math.js' }))).toBe('● Read(math.js)');
    expect(toolCallLine('Agent', toolArgument('Agent', { description: 'find tests', prompt: 'p', subagent_type: 'Explore' }))).toBe('● Agent(find tests)');
    expect(toolCallLine('Grep', toolArgument('Grep', { pattern: 'TODO', path: 'src' }))).toBe('● Grep(TODO in src)');
    expect(toolArgument('Frob', { a: 1, b: 'two' })).toBe('a: 1, b: two');
    // From the live channel's summaries, the same.
    expect(argumentFromSummary('Bash', 'Bash: touch a.txt')).toBe('touch a.txt');
    expect(argumentFromSummary('Write', 'Write notes.txt')).toBe('notes.txt');
    expect(argumentFromSummary('Agent', 'Agent (Explore): find tests')).toBe('find tests');
  });

  it('show an MCP tool (no spec of ours) with its input fields, in the live summary and the line made from it', () => {
    const summary = toolCallSummary('mcp__github__get_issue', { owner: 'acme', number: 7 });
    expect(summary).toBe('mcp__github__get_issue: owner: acme, number: 7');
    expect(toolCallLine('mcp__github__get_issue', argumentFromSummary('mcp__github__get_issue', summary))).toBe(
      '● mcp__github__get_issue(owner: acme, number: 7)',
    );
    expect(toolCallSummary('mcp__github__list', {})).toBe('mcp__github__list');
  });

  it('show a result under its call, errors marked', () => {
    expect(toolResultLine('one\ntwo\nthree\n', false)).toBe('  ⎿  one (+2 lines)');
    expect(toolResultLine('nope', true)).toBe('  ⎿  Error: nope');
  });

  it('are the same in the events feed (--follow, npm start)', () => {
    const event = {
      seq: 1,
      message: { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't', name: 'Read', input: { file_path: 'math.js' } }] } },
    } as unknown as ConversationEvent;
    expect(formatEvent(event)).toBe('● Read(math.js)');
  });

  it("ask's and chat's permission question names the call and previews what it would write", () => {
    const lines = permissionQuestionLines({ toolName: 'Write', input: { file_path: 'notes.txt', content: 'hello\nworld\n' }, reason: 'writes need approval' });
    expect(lines).toEqual(['⚠ Write(notes.txt) needs permission: writes need approval', '    1   hello', '    2   world']);
    expect(toolPreview('Edit', { file_path: 'a', old_string: 'let i = 1;', new_string: 'let i = 0;' })).toEqual(['    - let i = 1;', '    + let i = 0;']);
    expect(toolPreview('Write', { file_path: 'a', content: Array.from({ length: 10 }, (_, i) => `l${i}`).join('\n') })).toHaveLength(7);
  });
});

describe('tool results in Claude Code words', () => {
  const read = Array.from({ length: 11 }, (_, index) => `${String(index + 1).padStart(6)}\tline ${index + 1}`).join('\n');

  it('say what the tool did', () => {
    expect(toolResultLine(read, false, 120, { name: 'Read', input: { file_path: 'a.ts' } })).toBe('  ⎿  Read 11 lines');
    expect(
      toolResultLine(`${read}\n\n<system-reminder>Showing lines 1-11. The file has more lines.</system-reminder>`, false, 120, {
        name: 'Read',
        input: { file_path: 'a.ts' },
      }),
    ).toBe('  ⎿  Read 11 lines');
    expect(
      toolResultLine('The file a.ts has been updated.', false, 120, { name: 'Edit', input: { file_path: 'x.ts', old_string: 'a', new_string: 'b' } }),
    ).toBe('  ⎿  Updated x.ts with 1 addition and 1 removal');
    expect(toolResultSummary('Edit', { file_path: 'x.ts', old_string: 'a', new_string: 'a\nb\nc' }, 'ok')).toBe('Updated x.ts with 2 additions');
    expect(toolResultSummary('Write', { file_path: 'x.ts', content: 'one\ntwo\nthree\n' }, 'File created')).toBe('Wrote 3 lines to x.ts');
    expect(toolResultSummary('Glob', { pattern: '*.ts' }, 'a.ts\nb.ts\nc/d.ts\ne.ts')).toBe('Found 4 files');
    expect(toolResultSummary('Glob', { pattern: '*.x' }, 'No files found')).toBe('Found 0 files');
    expect(toolResultSummary('Grep', { pattern: 'x' }, 'Found 2 files\na.ts\nb.ts')).toBe('Found 2 files');
    expect(toolResultSummary('Grep', { pattern: 'x', output_mode: 'content' }, 'a.ts:1:x\na.ts:4:x\n--\nb.ts:2:x')).toBe('Found 3 lines');
    expect(toolResultSummary('Grep', { pattern: 'x', output_mode: 'count' }, 'a.ts:3\nb.ts:1\n\nFound 4 total occurrences across 2 files.')).toBe(
      'Found 4 matches in 2 files',
    );
    expect(toolResultSummary('TaskList', {}, 'whatever')).toBeUndefined();
  });

  it("show a Bash command's first output lines, then how many more", () => {
    const output = Array.from({ length: 10 }, (_, index) => `out ${index + 1}`).join('\n');
    expect(toolResultLine(output, false, 120, { name: 'Bash', input: { command: 'seq' } })).toBe('  ⎿  out 1\n     out 2\n     out 3\n     … +7 lines');
    expect(toolResultLine('', false, 120, { name: 'Bash', input: { command: 'true' } })).toBe('  ⎿  (No content)');
  });

  it('keep errors and unknown tools as their first line', () => {
    expect(toolResultLine('File does not exist.', true, 120, { name: 'Read', input: { file_path: 'a' } })).toBe('  ⎿  Error: File does not exist.');
    expect(toolResultLine('one\ntwo', false, 120, { name: 'mcp__x__y', input: {} })).toBe('  ⎿  one (+1 lines)');
  });

  it('in the events feed when the caller keeps the calls', () => {
    const calls = new Map();
    const assistant = {
      seq: 1,
      message: { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'math.js' } }] } },
    } as unknown as ConversationEvent;
    const user = {
      seq: 2,
      message: { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: read }] } },
    } as unknown as ConversationEvent;
    expect(formatEvent(assistant, calls)).toBe('● Read(math.js)');
    expect(formatEvent(user, calls)).toBe('  ⎿  Read 11 lines');
    expect(calls.size).toBe(0);
    expect(formatEvent(user)).toBe('  ⎿       1\tline 1 (+10 lines)');
  });
});

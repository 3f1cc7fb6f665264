/** One tool-line format for every view (issue 19, item 7). */
import { describe, expect, it } from 'vitest';
import { argumentFromSummary, toolArgument, toolCallLine, toolPreview, toolResultLine } from '../../client/tool-line';
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

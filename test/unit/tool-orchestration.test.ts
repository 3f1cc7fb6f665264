/** seed §2.4: partitioning tool calls into concurrent and serial batches. */
import { describe, expect, it } from 'vitest';
import type { ToolUseBlock } from '../../common/messages';
import { gatherPermissionFacts } from '../../activities/permission-facts/gather';
import { isToolUseConcurrencySafe } from '../../common/tool-specs';
import { describeToolUse, partitionToolCalls } from '../../workflows/query/tool-orchestration';

let next = 0;
const call = (name: string, input: unknown): ToolUseBlock => ({ type: 'tool_use', id: `t${next++}`, name, input });
const read = (file: string) => call('Read', { file_path: file });
const bash = (command: string) => call('Bash', { command });
const names = (batches: ReturnType<typeof partitionToolCalls>) =>
  batches.map((batch) => `${batch.isConcurrencySafe ? 'concurrent' : 'serial'}:${batch.blocks.map((block) => block.name).join(',')}`);

describe('partitionToolCalls', () => {
  it('groups consecutive safe calls and isolates each unsafe one (the seed example)', () => {
    const blocks = [
      read('a'),
      read('b'),
      read('c'),
      bash('rm -rf build'),
      call('Edit', { file_path: 'x', old_string: 'a', new_string: 'b' }),
      read('d'),
      read('e'),
    ];
    expect(names(partitionToolCalls(blocks))).toEqual(['concurrent:Read,Read,Read', 'serial:Bash', 'serial:Edit', 'concurrent:Read,Read']);
  });

  it('keeps request order inside and across batches', () => {
    const blocks = [read('a'), call('Write', { file_path: 'w', content: '' }), read('b'), call('Glob', { pattern: '*' })];
    expect(partitionToolCalls(blocks).flatMap((batch) => batch.blocks)).toEqual(blocks);
  });

  it('lets read-only Bash join a concurrent batch and keeps writing Bash serial, on the facts of the real parser (issue 29)', async () => {
    const blocks = [bash('ls -la'), bash('git status'), read('a'), bash('npm test'), bash('cat a | wc -l'), bash('echo hi > out.txt')];
    const facts = new Map(
      (
        await gatherPermissionFacts({ cwd: process.cwd(), calls: blocks.map((block) => ({ toolUseId: block.id, name: block.name, input: block.input })) })
      ).facts.map((fact) => [fact.toolUseId, fact]),
    );
    expect(names(partitionToolCalls(blocks, undefined, facts))).toEqual(['concurrent:Bash,Bash,Read', 'serial:Bash', 'concurrent:Bash', 'serial:Bash']);
    // Without facts (none gathered, or the activity failed) no Bash call runs beside another.
    expect(names(partitionToolCalls(blocks))).toEqual(['serial:Bash', 'serial:Bash', 'concurrent:Read', 'serial:Bash', 'serial:Bash', 'serial:Bash']);
  });

  it('treats unknown tools and schema-invalid input as unsafe', () => {
    expect(isToolUseConcurrencySafe(call('Nope', {}))).toBe(false);
    expect(isToolUseConcurrencySafe(call('Read', { path: 'wrong-key' }))).toBe(false);
    expect(isToolUseConcurrencySafe(read('ok'))).toBe(true);
    expect(names(partitionToolCalls([read('a'), call('Nope', {}), read('b')]))).toEqual(['concurrent:Read', 'serial:Nope', 'concurrent:Read']);
  });

  it('returns no batches for no calls', () => {
    expect(partitionToolCalls([])).toEqual([]);
  });
});

describe('describeToolUse', () => {
  it('names the command or file, shortened', () => {
    expect(describeToolUse(bash('cat missing'))).toBe('Bash(cat missing)');
    expect(describeToolUse(read('src/app.ts'))).toBe('Read(src/app.ts)');
    expect(describeToolUse(bash('x'.repeat(200)))).toHaveLength('Bash()'.length + 80);
  });
});

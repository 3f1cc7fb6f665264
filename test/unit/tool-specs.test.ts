import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_TIMEOUT_MS,
  TOOL_NAMES,
  TOOL_SPECS,
  getToolSpec,
  interpretExitCode,
  isToolName,
  isToolUseConcurrencySafe,
  isToolUseStartableEarly,
} from '../../common/tool-specs';
import { parseAgentFile } from '../../activities/agent-files';
import { agentTools, findAgent } from '../../common/agents';
import { TOOLS_WITHOUT_PERMISSION, ruleForAlways, toolPaths } from '../../common/permissions';
import { gatherCallFacts } from '../../activities/permission-facts/gather';
import { finalProgram } from '../../activities/permission-facts/bash-facts';
import { COMPACTABLE_TOOLS } from '../../workflows/compaction/micro';
import { LOCAL_TOOLS } from '../../workflows/deps/tool-run';
import { needsFacts } from '../../workflows/permissions/gate';
import { toolPreview } from '../../client/tool-line';
import { toolEndSummary } from '../../common/tool-ui';

function spec(name: string) {
  const found = getToolSpec(name);
  if (!found) throw new Error(`missing spec ${name}`);
  return found;
}

describe('tool specs registry', () => {
  it("a finished call's live line is its descriptor's words when they fit one line, else the result's first line", () => {
    expect(toolEndSummary('Read', { file_path: 'a.txt' }, '     1\tone\n     2\ttwo', false)).toBe('Read 2 lines');
    expect(toolEndSummary('Glob', { pattern: '*.ts' }, 'a.ts\nb.ts', false)).toBe('Found 2 files');
    // Bash's words are several lines (its first output lines): the line is the output's first.
    expect(toolEndSummary('Bash', { command: 'ls' }, 'a\nb\nc\nd\ne', false)).toBe('a (5 lines)');
    // A failed call says what failed, not what it would have read.
    expect(toolEndSummary('Read', { file_path: 'a.txt' }, 'File does not exist.', true)).toBe('File does not exist.');
    expect(toolEndSummary('mcp__x__y', {}, 'done', false)).toBe('done');
  });

  it('every tool that writes a file says what it would change, so a person sees its diff before allowing it', () => {
    const writers = TOOL_SPECS.filter((spec) => spec.fileAccess?.access === 'write');
    expect(writers.map((spec) => spec.name)).toEqual(['Write', 'Edit', 'NotebookEdit']);
    for (const spec of writers) expect(spec.changePreview, spec.name).toBeTypeOf('function');
    expect(getToolSpec('Edit')!.changePreview!({ file_path: 'a', old_string: 'x', new_string: 'y', replace_all: true })).toEqual({
      kind: 'edit',
      oldText: 'x',
      newText: 'y',
      replaceAll: true,
    });
  });

  it("uses Claude Code's names, in order", () => {
    expect(TOOL_NAMES).toEqual([
      'Read',
      'Write',
      'Edit',
      'NotebookEdit',
      'Bash',
      'Glob',
      'Grep',
      'WebFetch',
      'Agent',
      'TaskOutput',
      'TaskStop',
      'SendMessage',
      'TaskCreate',
      'TaskGet',
      'TaskList',
      'TaskUpdate',
      'ScheduleWakeup',
      'CronCreate',
      'CronDelete',
      'CronList',
      'EnterWorktree',
      'ExitWorktree',
      'Skill',
    ]);
    expect(TOOL_SPECS.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
  });

  // Issue 30: every tool-name set derives from the specs. The workflow decides on these sets (which
  // calls run locally, in which order they are prefetched, which results are cleared, which calls
  // gather facts), so their members and order are pinned: a change would change recorded histories.
  it('derives the tool-name sets from the specs, with the members the hand-kept sets had', () => {
    expect([...COMPACTABLE_TOOLS].sort()).toEqual(['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Write']);
    expect([...LOCAL_TOOLS]).toEqual(['Read', 'Glob', 'Grep']);
    expect(TOOL_NAMES.filter(needsFacts)).toEqual(['Read', 'Write', 'Edit', 'NotebookEdit', 'Bash', 'Glob', 'Grep']);
    expect(needsFacts('mcp__server__tool')).toBe(false);
    expect([...TOOLS_WITHOUT_PERMISSION]).toEqual([
      'Agent',
      'TaskOutput',
      'TaskStop',
      'SendMessage',
      'TaskCreate',
      'TaskGet',
      'TaskList',
      'TaskUpdate',
      'ScheduleWakeup',
      'CronCreate',
      'CronDelete',
      'CronList',
      'EnterWorktree',
      'ExitWorktree',
      'Skill',
    ]);
    const access = Object.fromEntries(TOOL_SPECS.flatMap((tool) => (tool.fileAccess ? [[tool.name, tool.fileAccess.access]] : [])));
    expect(access).toEqual({ Read: 'read', Write: 'write', Edit: 'write', NotebookEdit: 'write', Glob: 'read', Grep: 'read' });
  });

  it("reads a file tool's paths from the fields its spec names", () => {
    expect(toolPaths('Read', { file_path: 'a/b.txt' }, '/w')).toEqual(['/w/a/b.txt']);
    expect(toolPaths('Write', { file_path: '/etc/x', content: '' }, '/w')).toEqual(['/etc/x']);
    expect(toolPaths('Edit', { file_path: 7 }, '/w')).toEqual([]);
    expect(toolPaths('Grep', { pattern: 'x' }, '/w')).toEqual(['/w']);
    expect(toolPaths('Glob', { pattern: '../up/*.ts', path: 'src' }, '/w')).toEqual(['/w/src', '/w/up']);
    expect(toolPaths('Bash', { command: 'cat /etc/passwd' }, '/w')).toEqual([]);
    expect(ruleForAlways('Grep', { pattern: 'x', path: 'src' }, '/w')).toBe('Grep(//w/src/**)');
    expect(ruleForAlways('Read', { file_path: 'src/a.ts' }, '/w')).toBe('Read(//w/src/**)');
  });

  it('previews what a call would write as a diff (client/render/diff.ts)', () => {
    expect(toolPreview('Write', { file_path: 'a', content: '' })).toEqual(['    (an empty file)']);
    expect(toolPreview('Write', { file_path: 'a', content: 'one\ntwo\n' })).toEqual(['    1   one', '    2   two']);
    expect(toolPreview('Edit', { file_path: 'a', old_string: '', new_string: 'x' })).toEqual(['    + x']);
    expect(toolPreview('Edit', { file_path: 'a', old_string: 'x' })).toEqual([]);
    expect(toolPreview('Bash', { command: 'ls' })).toEqual([]);
  });

  it('finds specs by name and returns undefined for unknown tools', () => {
    expect(getToolSpec('Read')?.name).toBe('Read');
    expect(getToolSpec('read')).toBeUndefined();
    expect(getToolSpec('WebSearch')).toBeUndefined(); // the API's server tool, not one of ours
    expect(isToolName('Grep')).toBe(true);
    expect(isToolName('grep')).toBe(false);
  });

  it('sets the result budgets', () => {
    const budgets = Object.fromEntries(TOOL_SPECS.map((tool) => [tool.name, tool.maxResultSizeChars]));
    expect(budgets).toEqual({
      Read: 100_000,
      Write: 10_000,
      Edit: 10_000,
      NotebookEdit: 100_000,
      Bash: 30_000,
      Glob: 20_000,
      Grep: 20_000,
      WebFetch: 100_000,
      Agent: 100_000,
      TaskOutput: 30_000,
      TaskStop: 10_000,
      SendMessage: 100_000,
      TaskCreate: 10_000,
      TaskGet: 20_000,
      TaskList: 20_000,
      TaskUpdate: 10_000,
      ScheduleWakeup: 10_000,
      CronCreate: 10_000,
      CronDelete: 10_000,
      CronList: 20_000,
      EnterWorktree: 10_000,
      ExitWorktree: 10_000,
      Skill: 10_000,
    });
    expect(BASH_DEFAULT_TIMEOUT_MS).toBe(120_000);
    expect(BASH_MAX_TIMEOUT_MS).toBe(600_000);
  });

  it('has a description for every tool and converts every schema to JSON Schema', () => {
    for (const tool of TOOL_SPECS) {
      expect(tool.description.length).toBeGreaterThan(50);
      const jsonSchema = z.toJSONSchema(tool.inputSchema) as { type: string; additionalProperties: boolean };
      expect(jsonSchema.type).toBe('object');
      expect(jsonSchema.additionalProperties).toBe(false);
    }
  });
});

describe('read-only and concurrency decisions', () => {
  it.each([
    ['Read', { file_path: 'a.ts' }, true],
    ['Glob', { pattern: '**/*.ts' }, true],
    ['Grep', { pattern: 'TODO' }, true],
    ['Write', { file_path: 'a.ts', content: 'x' }, false],
    ['Edit', { file_path: 'a.ts', old_string: 'a', new_string: 'b' }, false],
    ['Bash', { command: 'git status' }, true],
    ['Bash', { command: 'ls -la | wc -l' }, true],
    ['Bash', { command: 'npm test' }, false],
    ['Bash', { command: 'echo hi > out.txt' }, false],
    ['Bash', { command: '' }, true], // runs nothing (the permission engine allows it too)
  ] as const)('%s %j -> %s', async (name, input, expected) => {
    const tool = spec(name);
    const parsed = tool.inputSchema.parse(input);
    // Bash is judged on its command's facts from the real parser (issue 29: the one Bash analysis).
    const facts = await gatherCallFacts({ toolUseId: 't', name, input }, process.cwd());
    expect(tool.isReadOnly(parsed, facts)).toBe(expected);
    expect(tool.isConcurrencySafe(parsed, facts)).toBe(expected);
  });

  it('a Bash call without facts (none gathered, or the parser failed) is neither read-only nor concurrency-safe', async () => {
    const tool = spec('Bash');
    const parsed = tool.inputSchema.parse({ command: 'ls' });
    expect(tool.isReadOnly(parsed)).toBe(false);
    expect(tool.isConcurrencySafe(parsed)).toBe(false);
    expect(isToolUseStartableEarly({ name: 'Bash', input: { command: 'ls' } })).toBe(false);
    const failed = { toolUseId: 't', bash: { problems: ['the command could not be examined (parser failed)'], commands: [] } };
    expect(tool.isReadOnly(parsed, failed)).toBe(false);
    const facts = await gatherCallFacts({ toolUseId: 't', name: 'Bash', input: { command: 'ls' } }, process.cwd());
    expect(isToolUseStartableEarly({ name: 'Bash', input: { command: 'ls' } }, facts)).toBe(true);
  });

  it('a background Bash keeps its read-only fact (the same permission decision) but never starts while the model streams', async () => {
    const tool = spec('Bash');
    const input = { command: 'git status', run_in_background: true };
    const parsed = tool.inputSchema.parse(input);
    const facts = await gatherCallFacts({ toolUseId: 't', name: 'Bash', input }, process.cwd());
    expect(tool.isReadOnly(parsed, facts)).toBe(true);
    expect(tool.isConcurrencySafe(parsed, facts)).toBe(false);
    expect(tool.summarize(parsed)).toBe('Bash (background): git status');
  });
});

describe('summarize', () => {
  it.each([
    ['Read', { file_path: 'src/app.ts' }, 'Read src/app.ts'],
    ['Write', { file_path: 'notes.md', content: '# hi' }, 'Write notes.md'],
    ['Edit', { file_path: 'src/x.ts', old_string: 'a', new_string: 'b' }, 'Edit src/x.ts'],
    ['Bash', { command: 'npm test', description: 'Run the tests' }, 'Bash: npm test'],
    ['Glob', { pattern: '**/*.ts' }, 'Glob **/*.ts'],
    ['Grep', { pattern: 'TODO' }, 'Grep TODO'],
  ] as const)('%s', (name, input, label) => {
    const tool = spec(name);
    expect(tool.summarize(tool.inputSchema.parse(input))).toBe(label);
  });

  it('truncates long Bash commands to about 60 characters', () => {
    const tool = spec('Bash');
    const command = `echo ${'x'.repeat(200)}`;
    const label = tool.summarize(tool.inputSchema.parse({ command }));
    expect(label.startsWith('Bash: echo xxx')).toBe(true);
    expect(label.length).toBeLessThanOrEqual('Bash: '.length + 60);
    expect(label.endsWith('…')).toBe(true);
    expect(tool.summarize(tool.inputSchema.parse({ command: 'npm run build\n&& npm test' }))).toBe('Bash: npm run build && npm test');
  });
});

describe('strict input schemas', () => {
  it.each([
    ['Read', { file_path: 'a', extra: 1 }],
    ['Write', { file_path: 'a', content: 'x', mode: 'append' }],
    ['Edit', { file_path: 'a', old_string: 'a', new_string: 'b', replaceAll: true }],
    ['Bash', { command: 'ls', background: true }],
    ['Glob', { pattern: '*', cwd: '/' }],
    ['Grep', { pattern: 'x', '-Z': true }],
  ] as const)('%s rejects unknown keys', (name, input) => {
    const result = spec(name).inputSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it.each([
    ['Read', { file_path: 'a', offset: -1 }],
    ['Read', { file_path: 'a', limit: 0 }],
    ['Read', { file_path: 'a', offset: 1.5 }],
    ['Read', {}],
    ['Write', { file_path: 'a' }],
    ['Edit', { file_path: 'a', old_string: 'a' }],
    ['Edit', { file_path: 'a', old_string: 'a', new_string: 'b', replace_all: 'yes' }],
    ['Bash', { command: 'ls', timeout: 600_001 }],
    ['Bash', { command: 42 }],
    ['Grep', { pattern: 'x', output_mode: 'lines' }],
    ['Grep', { pattern: 'x', head_limit: -1 }],
    ['Grep', { pattern: 'x', '-C': 1.5 }],
    ['Glob', { path: '.' }],
  ] as const)('%s rejects invalid input %j', (name, input) => {
    expect(spec(name).inputSchema.safeParse(input).success).toBe(false);
  });

  it('accepts the literal -i and -n keys of Grep', () => {
    const parsed = spec('Grep').inputSchema.parse({ pattern: 'x', '-i': true, '-n': true, output_mode: 'content', head_limit: 5 });
    expect(parsed).toMatchObject({ '-i': true, '-n': true });
  });
});

describe('interpretExitCode (Claude Code command semantics)', () => {
  it.each([
    ['grep -rn TODO src', 1, false, 'no matches found'],
    ['cat log | grep error', 1, false, 'no matches found'],
    ['LANG=C rg needle', 1, false, 'no matches found'],
    ['diff a.txt b.txt', 1, false, 'files differ'],
    ['[ -f build/app.js ]', 1, false, 'condition is false'],
    ['/usr/bin/test -d out', 1, false, 'condition is false'],
    ['grep x file', 2, true, undefined],
    ['mkdir a && grep x a/file', 1, true, undefined],
    ['npm test', 1, true, undefined],
    ['ls', 0, false, undefined],
    // On the parsed command (issue 29): quotes and comments are the grammar's, a list is never one pipeline.
    ["grep 'a|b' file", 1, false, 'no matches found'],
    ['grep "x;y" file 2>/dev/null', 1, false, 'no matches found'],
    ['grep x file # a && b', 1, false, 'no matches found'],
    ['[[ -d out ]]', 1, true, undefined],
    ['grep x file; true', 1, true, undefined],
    ['true\ngrep x file', 1, true, undefined],
    ['$CMD x', 1, true, undefined],
    ["grep 'unterminated", 1, true, undefined],
  ])('%s exiting %i → error %s', async (command, code, isError, meaning) => {
    expect(interpretExitCode(await finalProgram(command), code)).toEqual(meaning ? { isError, meaning } : { isError });
  });
});

describe('Agent tool and subagent types', () => {
  it('runs Agent calls side by side but never starts one while the model streams', () => {
    const call = { name: 'Agent', input: { description: 'find it', prompt: 'Find it', subagent_type: 'Explore' } };
    expect(isToolUseConcurrencySafe(call)).toBe(true);
    expect(isToolUseStartableEarly(call)).toBe(false);
    expect(isToolUseStartableEarly({ name: 'Read', input: { file_path: 'a' } })).toBe(true);
    expect(isToolUseStartableEarly({ name: 'Bash', input: { command: 'rm -rf x' } })).toBe(false);
  });

  it('gives general-purpose every tool but Agent, Explore read-only tools, a custom agent its list', () => {
    const offered = ['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep', 'Agent'];
    expect(agentTools(findAgent('general-purpose')!, offered)).toEqual(['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep']);
    expect(agentTools(findAgent('Explore')!, offered)).toEqual(['Read', 'Glob', 'Grep']);
    const reviewer = parseAgentFile(
      '---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Agent\nmodel: claude-haiku-4-5\n---\nYou review code.\n',
      'reviewer.md',
    );
    expect(reviewer).toMatchObject({ name: 'reviewer', tools: ['Read', 'Grep', 'Agent'], model: 'claude-haiku-4-5', systemPrompt: 'You review code.' });
    expect(agentTools(reviewer, offered)).toEqual(['Read', 'Grep']); // subagents never get Agent
    expect(findAgent('reviewer', [reviewer])).toBe(reviewer);
    expect(findAgent('nobody', [reviewer])).toBeUndefined();
  });

  it('parses YAML list tools and inherit, and explains a malformed agent file', () => {
    const listed = parseAgentFile('---\nname: x\ndescription: "An agent"\ntools:\n  - Read\n  - Glob\nmodel: inherit\n---\n', 'x.md');
    expect(listed).toMatchObject({ tools: ['Read', 'Glob'], model: undefined, systemPrompt: undefined, description: 'An agent' });
    expect(() => parseAgentFile('no front matter', 'bad.md')).toThrow(/bad.md: an agent file starts with front matter/);
    expect(() => parseAgentFile('---\nname: y\n---\nbody', 'y.md')).toThrow(/needs a description/);
  });
});

/**
 * Front matter of agents and custom commands as YAML (issue 23 §2): block scalars, flow and block
 * lists, comments, quoted strings — each a form the old hand reader got wrong.
 */
import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../../activities/agent-files';
import { parseCommandFile } from '../../activities/custom-commands';
import { readFrontMatter } from '../../activities/front-matter';

describe('YAML front matter', () => {
  it('block scalars: `description: |` and `>` keep their text (the old reader gave "|")', () => {
    const agent = parseAgentFile(
      [
        '---',
        'name: reviewer',
        'description: |',
        '  Reviews diffs.',
        '  Use after every change.',
        'model: >-',
        '  claude-haiku-4-5',
        '---',
        'You review code.',
      ].join('\n'),
      'reviewer.md',
    );
    expect(agent.description).toBe('Reviews diffs.\nUse after every change.');
    expect(agent.model).toBe('claude-haiku-4-5');
    expect(agent.systemPrompt).toBe('You review code.');
  });

  it('lists: flow `[Read, Grep]`, block `- item`, and comma-separated text all give the tools', () => {
    const flow = parseAgentFile('---\nname: a\ndescription: d\ntools: [Read, Grep]\n---\n', 'a.md');
    expect(flow.tools).toEqual(['Read', 'Grep']); // the old reader gave "[Read" and "Grep]": no tools at all
    const block = parseAgentFile('---\nname: b\ndescription: d\ntools:\n  - Read\n  - "Glob"\n---\n', 'b.md');
    expect(block.tools).toEqual(['Read', 'Glob']);
    const text = parseAgentFile('---\nname: c\ndescription: d\ntools: Read, Grep, Bash(git diff:*)\n---\n', 'c.md');
    expect(text.tools).toEqual(['Read', 'Grep', 'Bash(git diff:*)']);
    const command = parseCommandFile('---\nallowed-tools: [Bash(git add:*), Bash(git commit:*)]\n---\nCommit.', 'commit', 'project', 'commit.md');
    expect(command.allowedTools).toEqual(['Bash(git add:*)', 'Bash(git commit:*)']);
  });

  it('comments: a `# comment` line or after a value is not part of the value', () => {
    const agent = parseAgentFile("---\n# the reviewer\nname: reviewer # short name\ndescription: Reviews # why\nmodel: inherit # the parent's\n---\n", 'r.md');
    expect(agent).toMatchObject({ name: 'reviewer', description: 'Reviews', model: undefined });
  });

  it('quoted strings: `#` and `:` inside quotes stay, escapes are decoded', () => {
    const command = parseCommandFile(
      `---\ndescription: "Fix issue #123: the parser"\nargument-hint: '[pr-number] [priority]'\nmodel: "claude-\\u0068aiku-4-5"\n---\nFix $ARGUMENTS.`,
      'fix',
      'project',
      'fix.md',
    );
    expect(command).toMatchObject({
      description: 'Fix issue #123: the parser',
      argumentHint: '[pr-number] [priority]',
      model: 'claude-haiku-4-5',
      body: 'Fix $ARGUMENTS.',
    });
  });

  it("Claude Code's argument-hint forms: `[message]` (a YAML list) and `[pr-number] [priority]` (not YAML: quoted and retried)", () => {
    expect(parseCommandFile('---\nargument-hint: [message]\n---\nx', 'a', 'project', 'a.md').argumentHint).toBe('[message]');
    expect(parseCommandFile('---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Review PR\n---\nx', 'b', 'project', 'b.md')).toMatchObject({
      argumentHint: '[pr-number] [priority] [assignee]',
      description: 'Review PR',
    });
  });

  it('invalid YAML, a non-mapping, and an unclosed block are errors naming the file; no front matter is fine', () => {
    expect(() => parseAgentFile('---\nname: "unterminated\ndescription: d\n---\n', 'bad.md')).toThrow(/bad\.md: the front matter is not valid YAML/);
    expect(() => parseAgentFile('---\nname: a\nname: b\ndescription: d\n---\n', 'dup.md')).toThrow(/dup\.md: the front matter is not valid YAML/);
    expect(() => readFrontMatter('---\n- a\n- b\n---\n', 'list.md')).toThrow(/list\.md: the front matter must be YAML `key: value` pairs/);
    expect(() => parseCommandFile('---\ndescription: x\n', 'x', 'project', 'x.md')).toThrow(/never closed/);
    expect(readFrontMatter('# Title\nbody', 'plain.md')).toBeUndefined();
    expect(readFrontMatter('---\n---\nbody', 'empty.md')).toEqual({ fields: {}, body: 'body' });
  });

  it('scalars YAML types as numbers or booleans are read as text', () => {
    const agent = parseAgentFile('---\nname: 007\ndescription: true\n---\n', 'n.md');
    expect(agent).toMatchObject({ name: '7', description: 'true' });
  });
});

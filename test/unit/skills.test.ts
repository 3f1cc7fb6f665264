import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatherCallFacts } from '../../activities/permission-facts/gather';
import { loadSkillBody, parseSkillFile, readSkills, skillSources } from '../../activities/skills';
import type { RuleWithSource } from '../../common/permission-rules';
import { decidePermission } from '../../common/permissions';
import { grantRules, resolveSkillCall, skillGrant, skillListing, skillPrompt } from '../../common/skills';
import { TOOL_NAMES, getToolSpec } from '../../common/tool-specs';
import type { SessionContext } from '../../common/activity-types';
import { parseConversationConfig } from '../../common/config';
import { offeredToolNames, promptLayers } from '../../workflows/session/request-contexts';

const where = { file: '/s/pdf/SKILL.md', directory: '/s/pdf', folderName: 'pdf', scope: 'user' as const };

describe('parseSkillFile', () => {
  it('reads Claude Code front matter', () => {
    const skill = parseSkillFile(
      '---\nname: pdf\ndescription: |\n  Fill PDF forms.\nallowed-tools: Read, Bash(python:*)\nmodel: inherit\ndisable-model-invocation: true\n---\n# PDF\nSteps.\n',
      where,
    );
    expect(skill).toEqual({
      name: 'pdf',
      description: 'Fill PDF forms.',
      allowedTools: ['Read', 'Bash(python:*)'],
      disableModelInvocation: true,
      body: '# PDF\nSteps.',
      directory: '/s/pdf',
      scope: 'user',
    });
  });

  it('takes the folder name when the front matter has none, and prefixes a plugin', () => {
    expect(parseSkillFile('---\ndescription: d\n---\nbody', { ...where, plugin: 'tools' }).name).toBe('tools:pdf');
  });

  it('describes a skill without a description by its first paragraph (as Claude Code); refuses one with nothing, or a bad name', () => {
    expect(parseSkillFile('# PDF tools\n\nFill forms\nwith pypdf.\n\n## More', where)).toMatchObject({ name: 'pdf', description: 'Fill forms with pypdf.' });
    expect(parseSkillFile('---\nname: pdf\n---\n# Only a heading\n', where).description).toBe('Only a heading');
    expect(() => parseSkillFile('---\nname: pdf\n---\n', where)).toThrow(/no description/);
    expect(() => parseSkillFile('---\nname: Bad Name\ndescription: d\n---\n', { ...where, folderName: 'Bad Folder' })).toThrow(/skill name/);
    expect(parseSkillFile('---\nname: Git Commit Helper\ndescription: d\n---\n', where).name).toBe('pdf');
  });
});

describe('readSkills', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'skills-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function skill(dir: string, name: string, description: string): Promise<void> {
    await mkdir(path.join(dir, name), { recursive: true });
    await writeFile(path.join(dir, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\nBody of ${description}\n`);
  }

  it('reads user and plugin skills, project skills only when trusted (the project wins a clash)', async () => {
    const home = path.join(root, 'home');
    const cwd = path.join(root, 'work');
    const plugin = path.join(root, 'plugin');
    await skill(path.join(home, '.claude', 'skills'), 'review', 'user review');
    await skill(path.join(cwd, '.claude', 'skills'), 'review', 'project review');
    await skill(path.join(plugin, 'skills'), 'lint', 'plugin lint');
    await mkdir(path.join(home, '.claude', 'skills', 'broken'), { recursive: true });
    await writeFile(path.join(home, '.claude', 'skills', 'broken', 'SKILL.md'), '---\nname: [unclosed\n---\n');
    const plugins = [{ name: 'kit', root: plugin }];

    const untrusted = await readSkills(skillSources(cwd, { home, trusted: false, plugins }));
    expect(untrusted.skills.map((s) => [s.name, s.description])).toEqual([
      ['kit:lint', 'plugin lint'],
      ['review', 'user review'],
    ]);
    expect(untrusted.errors).toEqual([expect.stringContaining('broken/SKILL.md')]);

    const trusted = await readSkills(skillSources(cwd, { home, trusted: true, plugins }));
    expect(trusted.skills.find((s) => s.name === 'review')?.description).toBe('project review');
  });
});

describe('skill listing and invocation', () => {
  const skills = [
    { name: 'pdf', description: 'Fill PDF forms', body: 'Use pypdf.', directory: '/s/pdf', scope: 'user' as const },
    { name: 'deploy', description: 'Deploy', body: 'Ship it.', directory: '/s/deploy', scope: 'user' as const, disableModelInvocation: true },
  ];
  it('offers only model-invocable skills, names and descriptions', () => {
    const listing = skillListing(skills)!;
    expect(listing).toContain('- pdf: Fill PDF forms');
    expect(listing).not.toContain('deploy');
    expect(listing).not.toContain('pypdf');
    expect(skillListing([])).toBeUndefined();
  });
  it('answers with the body and folder, or an error', () => {
    expect(resolveSkillCall(skills, 'pdf')).toMatchObject({ skill: { name: 'pdf' } });
    expect(skillPrompt(skills[0]!, 'Use pypdf.')).toBe('Base directory for this skill: /s/pdf\n\nUse pypdf.');
    expect(resolveSkillCall(skills, 'deploy')).toEqual({ error: expect.stringContaining('only be invoked by the user') });
    expect(resolveSkillCall(skills, 'nope')).toEqual({ error: expect.stringContaining('Available skills: pdf') });
  });
});

describe('what an active skill grants (the query allow rules the gate takes)', () => {
  const facts = (toolName: string, input: unknown) => {
    const spec = getToolSpec(toolName)!;
    const parsed = spec.inputSchema.safeParse(input);
    return { validInput: parsed.success, readOnly: parsed.success && spec.isReadOnly(parsed.data) };
  };
  const decide = (toolName: string, input: unknown, rules: { allow?: RuleWithSource[]; deny?: string[]; ask?: string[] }) =>
    decidePermission({ toolName, input }, facts(toolName, input), {
      mode: 'default',
      rules: {
        allow: rules.allow ?? [],
        deny: (rules.deny ?? []).map((rule) => ({ rule, source: 'userSettings' as const })),
        ask: (rules.ask ?? []).map((rule) => ({ rule, source: 'userSettings' as const })),
      },
      workingDirectories: ['/work'],
      homeDir: '/home/alice',
    }).behavior;
  const skill = { name: 'notes', description: 'd', directory: '/home/alice/.claude/skills/notes', scope: 'user' as const, allowedTools: ['Write'] };

  it("allows the skill's allowed-tools and reading its folder, never past a deny or ask rule", () => {
    const allow = grantRules([skillGrant(skill)]);
    expect(allow).toEqual([
      { rule: 'Write', source: 'session' },
      { rule: 'Read(//home/alice/.claude/skills/notes/**)', source: 'session' },
    ]);
    const write = { file_path: '/work/NOTES.md', content: 'x' };
    const reference = { file_path: '/home/alice/.claude/skills/notes/reference.md' };
    expect(decide('Write', write, {})).toBe('ask');
    expect(decide('Write', write, { allow })).toBe('allow');
    expect(decide('Read', reference, {})).toBe('ask');
    expect(decide('Read', reference, { allow })).toBe('allow');
    expect(decide('Grep', { pattern: 'x', path: '/home/alice/.claude/skills/notes' }, { allow })).toBe('allow');
    // The rest of ~/.claude is not the skill's folder.
    expect(decide('Read', { file_path: '/home/alice/.claude/settings.json' }, { allow })).toBe('ask');
    expect(decide('Write', write, { allow, deny: ['Write'] })).toBe('deny');
    expect(decide('Write', write, { allow, ask: ['Write(/NOTES.md)'] })).toBe('ask');
  });

  it("counts a workspace's own skill's rules as the workspace's (they cover nothing outside it), and names no folder a rule cannot", () => {
    const project = grantRules([skillGrant({ ...skill, scope: 'project', directory: '/work/.claude/skills/notes', allowedTools: ['Read'] })]);
    expect(project.every((rule) => rule.source === 'projectSettings')).toBe(true);
    expect(decide('Read', { file_path: '/etc/hosts' }, { allow: project })).toBe('ask');
    expect(grantRules([{ directory: '/home/a/skills/[x]' }])).toEqual([]);
  });
});

describe("a skill's folder, judged on real paths", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'skill-folder-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads its own files without asking, but a link in it to a secret elsewhere still asks', async () => {
    const home = path.join(root, 'home');
    const work = path.join(root, 'work');
    const dir = path.join(home, '.claude', 'skills', 'notes');
    await mkdir(dir, { recursive: true });
    await mkdir(work);
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'secret');
    await writeFile(path.join(dir, 'reference.md'), 'format');
    await symlink(path.join(home, '.ssh', 'id_ed25519'), path.join(dir, 'leak.md'));
    const allow = grantRules([skillGrant({ name: 'notes', description: 'd', directory: dir, scope: 'user' })]);
    const decideRead = async (file: string) => {
      const input = { file_path: file };
      const gathered = await gatherCallFacts({ toolUseId: 't', name: 'Read', input }, work, home);
      return decidePermission(
        { toolName: 'Read', input },
        { validInput: true, readOnly: true, gathered },
        { mode: 'default', rules: { allow, deny: [], ask: [] }, workingDirectories: [work], homeDir: home },
      ).behavior;
    };
    expect(await decideRead(path.join(dir, 'reference.md'))).toBe('allow');
    expect(await decideRead(path.join(dir, 'leak.md'))).toBe('ask');
  });
});

describe('loadSkillBody', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'skill-body-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("reads the skill's own SKILL.md (through a symlinked folder too), and refuses a link to another file", async () => {
    const real = path.join(root, 'dotfiles', 'notes');
    await mkdir(real, { recursive: true });
    await writeFile(path.join(real, 'SKILL.md'), '---\ndescription: d\n---\nThe body.\n');
    const skills = path.join(root, 'skills');
    await mkdir(skills);
    await symlink(real, path.join(skills, 'notes'));
    expect(await loadSkillBody({ name: 'notes', directory: path.join(skills, 'notes') })).toEqual({ body: 'The body.' });

    // A SKILL.md that is a link to a secret: not read, even when the secret looks like a skill.
    await writeFile(path.join(root, 'id_key'), '---\ndescription: key\n---\nsecret-canary\n');
    await mkdir(path.join(skills, 'key'));
    await symlink(path.join(root, 'id_key'), path.join(skills, 'key', 'SKILL.md'));
    const refused = await loadSkillBody({ name: 'key', directory: path.join(skills, 'key') });
    expect(refused).toEqual({ problem: expect.stringContaining('does not resolve to a SKILL.md') });
    expect(JSON.stringify(refused)).not.toContain('secret-canary');
    // Renamed since the context was read: not loaded under the old name.
    expect(await loadSkillBody({ name: 'other', directory: path.join(skills, 'notes') })).toEqual({
      problem: expect.stringContaining('now names the skill notes'),
    });
    expect(await loadSkillBody({ name: 'gone', directory: path.join(skills, 'gone') })).toEqual({ problem: expect.stringContaining('is gone') });
  });
});

describe('offering skills to the model', () => {
  const context = (skills: SessionContext['skills']): SessionContext => ({
    cwd: '/w',
    currentDate: 'Today',
    platform: 'linux',
    shell: 'bash',
    isGitRepo: false,
    stopHooks: [],
    ...(skills ? { skills } : {}),
  });
  const config = parseConversationConfig({ cwd: '/w' });
  const pdf = { name: 'pdf', description: 'Fill PDF forms', directory: '/s/pdf', scope: 'user' as const };
  const deploy = { name: 'deploy', description: 'Deploy', directory: '/s/deploy', scope: 'user' as const, disableModelInvocation: true };

  it('offers the Skill tool and lists the skills only when the model may invoke one', () => {
    expect(offeredToolNames(config, context(undefined))).not.toContain('Skill');
    expect(offeredToolNames(config, context([deploy]))).not.toContain('Skill');
    expect(offeredToolNames(config, context([pdf, deploy]))).toContain('Skill');
    // A conversation without skills is offered exactly what it was before the Skill tool existed.
    expect(offeredToolNames(config, context(undefined))).toEqual(TOOL_NAMES.filter((name) => name !== 'Skill'));
    // An explicit tool list without Skill stays without it.
    expect(offeredToolNames({ ...config, tools: ['Read'] }, context([pdf]))).toEqual(['Read']);

    const system = (skills: SessionContext['skills']) => {
      const ctx = context(skills);
      return JSON.stringify(promptLayers(config, ctx).systemPrompt);
    };
    expect(system([pdf, deploy])).toContain('- pdf: Fill PDF forms');
    expect(system([pdf, deploy])).not.toContain('- deploy');
    expect(system([deploy])).not.toContain('# Skills');
  });
});

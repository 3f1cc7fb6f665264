import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSkillFile, readSkills, skillSources } from '../../activities/skills';
import { resolveSkillCall, skillListing, skillPrompt } from '../../common/skills';

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

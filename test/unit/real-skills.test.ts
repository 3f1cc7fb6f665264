/**
 * Issue 33 §3: real skills from public collections (npm packages, exact-pinned devDependencies)
 * load as a user's ~/.claude/skills. SKILL_PACKAGES_DIR points at another node_modules (a local
 * run against packed tarballs); the test fails when the packages are missing, rather than passing on nothing.
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSkillBody, readSkillEntries, skillSources } from '../../activities/skills';

const NODE_MODULES = process.env.SKILL_PACKAGES_DIR ?? path.join(__dirname, '..', '..', 'node_modules');
/** The packages and how many SKILL.md files each holds. */
const PACKAGES: Record<string, number> = {
  'ai-labs-claude-skills': 27,
  'claude-code-plugins': 19,
  '@houseofwolvesllc/claude-scrum-skill': 10,
  '@nextsparkjs/ai-workflow': 50,
  '@plaited/development-skills': 5,
};

async function skillFolders(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'SKILL.md') found.push(entry.parentPath);
  }
  return found.sort();
}

describe('real skills from public collections', () => {
  let home: string | undefined;
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('at least 100 load from ~/.claude/skills, each with a description, and a body reads back', async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'real-skills-'));
    const target = path.join(home, '.claude', 'skills');
    const copied = new Set<string>();
    for (const [name, count] of Object.entries(PACKAGES)) {
      const folders = await skillFolders(path.join(NODE_MODULES, name));
      expect(folders, name).toHaveLength(count);
      for (const folder of folders) {
        // Folder names repeat across collections (two `pdf` skills): the later one gets its package's prefix.
        let base = path.basename(folder).toLowerCase();
        if (copied.has(base)) base = `${name.replace(/^@/, '').replace(/[^a-z0-9]+/g, '-')}-${base}`;
        copied.add(base);
        await cp(folder, path.join(target, base), { recursive: true });
      }
    }
    expect(copied.size).toBeGreaterThanOrEqual(100);

    const { skills, errors } = await readSkillEntries(skillSources(path.join(home, 'work'), { home, trusted: false }));
    expect(errors).toEqual([]);
    // Two collections ship Anthropic's docx, pdf, pptx and xlsx under their own names: one of each loads (the later folder wins).
    expect(skills).toHaveLength(copied.size - 4);
    expect(skills.length).toBeGreaterThanOrEqual(100);
    for (const skill of skills) expect(skill.description.length, skill.name).toBeGreaterThan(0);
    // The context carries no bodies; invoking reads one back from the skill's own SKILL.md.
    expect(skills.some((skill) => 'body' in skill)).toBe(false);
    const first = skills[0]!;
    const loaded = await loadSkillBody({ name: first.name, directory: first.directory });
    expect(loaded).toMatchObject({ body: expect.any(String) });
  });
});

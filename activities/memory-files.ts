/**
 * CLAUDE.md discovery as Claude Code does it (its `getMemoryFiles` / `getClaudeMds`), read once
 * per session by the session-context activity (seed §2.5 getUserContext):
 *
 *   1. managed policy   /etc/claude-code/CLAUDE.md
 *   2. user             ~/.claude/CLAUDE.md, ~/.claude/rules/*.md
 *   3. each directory from the top (below the filesystem root) down to the workspace:
 *      CLAUDE.md, .claude/CLAUDE.md, .claude/rules/*.md (project) and CLAUDE.local.md (local)
 *
 * Later files come later in the context, so the most specific instructions are read last. Each
 * file is labelled as Claude Code labels it when it injects them.
 */
import { readFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export type MemoryType = 'Managed' | 'User' | 'Project' | 'Local';

export interface MemoryFile {
  path: string;
  type: MemoryType;
  content: string;
}

/** Where organisations put managed instructions on Linux (Claude Code's path). */
export const MANAGED_CLAUDE_MD = '/etc/claude-code/CLAUDE.md';

/** The label after each file's path, as Claude Code writes it. */
export function memoryDescription(type: MemoryType): string {
  switch (type) {
    case 'Project':
      return ' (project instructions, checked into the codebase)';
    case 'Local':
      return " (user's private project instructions, not checked in)";
    default:
      // Managed files get the user label too: Claude Code has no branch of its own for them.
      return " (user's private global instructions for all projects)";
  }
}

/** The candidate files in reading order (pure: no file is touched). `rules` lists a rules directory's .md files. */
export function memoryFileCandidates(cwd: string, home: string, managedPath: string | undefined): Array<{ path: string; type: MemoryType } | { rulesDir: string; type: MemoryType }> {
  const candidates: Array<{ path: string; type: MemoryType } | { rulesDir: string; type: MemoryType }> = [];
  if (managedPath) candidates.push({ path: managedPath, type: 'Managed' });
  candidates.push({ path: path.join(home, '.claude', 'CLAUDE.md'), type: 'User' }, { rulesDir: path.join(home, '.claude', 'rules'), type: 'User' });
  // From the workspace up to (not including) the filesystem root, then read top-down.
  const directories: string[] = [];
  for (let directory = path.resolve(cwd); directory !== path.parse(directory).root; directory = path.dirname(directory)) directories.unshift(directory);
  for (const directory of directories) {
    candidates.push(
      { path: path.join(directory, 'CLAUDE.md'), type: 'Project' },
      { path: path.join(directory, '.claude', 'CLAUDE.md'), type: 'Project' },
      { rulesDir: path.join(directory, '.claude', 'rules'), type: 'Project' },
      { path: path.join(directory, 'CLAUDE.local.md'), type: 'Local' },
    );
  }
  return candidates;
}

/** The CLAUDE.md files that apply to `cwd`, in reading order; empty and unreadable files are skipped. */
export async function discoverMemoryFiles(
  cwd: string,
  options: { home?: string; managedPath?: string | undefined } = {},
): Promise<MemoryFile[]> {
  const home = options.home ?? os.homedir();
  const managedPath = 'managedPath' in options ? options.managedPath : MANAGED_CLAUDE_MD;
  const files: MemoryFile[] = [];
  const seen = new Set<string>();
  const read = async (file: string, type: MemoryType) => {
    const resolved = path.resolve(file);
    if (seen.has(resolved)) return; // ~/.claude/CLAUDE.md is also on the way up from a workspace under home
    seen.add(resolved);
    const content = await readFile(resolved, 'utf8').catch(() => undefined);
    if (content?.trim()) files.push({ path: resolved, type, content: content.trim() });
  };
  for (const candidate of memoryFileCandidates(cwd, home, managedPath)) {
    if ('path' in candidate) {
      await read(candidate.path, candidate.type);
    } else {
      const entries = await readdir(candidate.rulesDir).catch(() => [] as string[]);
      for (const entry of entries.filter((name) => name.endsWith('.md')).sort()) await read(path.join(candidate.rulesDir, entry), candidate.type);
    }
  }
  return files;
}

/** The files as the `# claudeMd` context shows them: `Contents of <path> (<label>):` then the text. */
export function formatMemoryFiles(files: readonly MemoryFile[]): string | undefined {
  if (files.length === 0) return undefined;
  return files.map((file) => `Contents of ${file.path}${memoryDescription(file.type)}:\n\n${file.content}`).join('\n\n');
}

/**
 * Per-workspace journal of mutating tool calls, keyed by tool_use id (architecture: "Rules that
 * keep it durable"). A retried activity whose first attempt finished returns the recorded result;
 * one whose first attempt started but never finished (the worker died mid-command) gets an
 * explicit error result instead of running the command again blindly.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface JournalEntry {
  toolUseId: string;
  conversationId: string;
  name: string;
  input: unknown;
  status: 'started' | 'finished' | 'cancelled';
  attempt: number;
  /** Host the attempt ran on (its leftovers can only be stopped there). */
  host?: string;
  startedAt: string;
  finishedAt?: string;
  result?: { content: string; isError: boolean; persistedPath?: string };
}

/** Where a workspace's journal and persisted tool results live, outside the workspace itself. */
export function workspaceStateDir(stateDir: string, cwd: string): string {
  const resolved = path.resolve(cwd);
  const slug = resolved.replace(/[^a-zA-Z0-9]+/g, '-').replace(/^-|-$/g, '').slice(-60) || 'root';
  const hash = createHash('sha256').update(resolved).digest('hex').slice(0, 10);
  return path.join(stateDir, 'workspaces', `${slug}-${hash}`);
}

let temporaryCounter = 0;

export class ToolJournal {
  constructor(private readonly stateDir: string) {}

  private file(cwd: string, toolUseId: string): string {
    return path.join(workspaceStateDir(this.stateDir, cwd), 'journal', `${toolUseId.replace(/[^a-zA-Z0-9_-]/g, '_')}.json`);
  }

  async get(cwd: string, toolUseId: string): Promise<JournalEntry | undefined> {
    try {
      return JSON.parse(await readFile(this.file(cwd, toolUseId), 'utf8')) as JournalEntry;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Atomic write (rename), so a crash never leaves a torn entry. */
  async put(cwd: string, entry: JournalEntry): Promise<void> {
    const file = this.file(cwd, entry.toolUseId);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${++temporaryCounter}.tmp`; // unique: puts may overlap
    await writeFile(temporary, JSON.stringify(entry));
    await rename(temporary, file);
  }
}

/**
 * Per-workspace journal of mutating tool calls, keyed by conversation and tool_use id
 * (architecture: "Rules that keep it durable"). Keyed by tool_use id alone, a model server that
 * reuses ids made a new conversation's Write return an older conversation's result without
 * writing (issue 12, defect 8). A retried activity whose first attempt finished returns the recorded result;
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

  private file(cwd: string, conversationId: string, toolUseId: string): string {
    return path.join(workspaceStateDir(this.stateDir, cwd), 'journal', conversationDirectory(conversationId), `${safeName(toolUseId)}.json`);
  }

  /** Where entries lived before they were keyed by conversation. */
  private legacyFile(cwd: string, toolUseId: string): string {
    return path.join(workspaceStateDir(this.stateDir, cwd), 'journal', `${safeName(toolUseId)}.json`);
  }

  async get(cwd: string, conversationId: string, toolUseId: string): Promise<JournalEntry | undefined> {
    const entry = await readEntry(this.file(cwd, conversationId, toolUseId));
    if (entry !== undefined) return entry;
    // An entry written before the upgrade still answers its own conversation's retry, no other's.
    const legacy = await readEntry(this.legacyFile(cwd, toolUseId));
    return legacy?.conversationId === conversationId && legacy.toolUseId === toolUseId ? legacy : undefined;
  }

  /** Atomic write (rename), so a crash never leaves a torn entry. */
  async put(cwd: string, entry: JournalEntry): Promise<void> {
    const file = this.file(cwd, entry.conversationId, entry.toolUseId);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${++temporaryCounter}.tmp`; // unique: puts may overlap
    await writeFile(temporary, JSON.stringify(entry));
    await rename(temporary, file);
  }
}

async function readEntry(file: string): Promise<JournalEntry | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as JournalEntry;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function safeName(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** A directory name per conversation id: readable, and hashed so ids differing only in unsafe characters stay apart. */
function conversationDirectory(conversationId: string): string {
  const hash = createHash('sha256').update(conversationId).digest('hex').slice(0, 12);
  return `${safeName(conversationId).slice(0, 80)}-${hash}`;
}

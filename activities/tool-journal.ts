/**
 * Per-workspace journal of mutating tool calls, keyed by conversation and tool_use id
 * (architecture: "Rules that keep it durable"). Keyed by tool_use id alone, a model server that
 * reuses ids made a new conversation's Write return an older conversation's result without
 * writing (issue 12, defect 8). A retried activity whose first attempt finished returns the recorded result.
 *
 * An entry goes `recorded` (the call is about to run; nothing changed yet) → `started` (its effect
 * began, written just before it did) → `finished` or `cancelled` (issue 24). A retry of a call that
 * was only recorded runs it: at most once must not mean "dropped when it never started". A command
 * that started ran at most once: nothing can tell how far it got, so it is not run again — unless it
 * was contained (sandboxed, network off, writable only inside the workspace) and a complete
 * checkpoint was taken before it, on this host: then the retry stops what is left of it, restores
 * the checkpoint and runs it again, so its effect happens once (issue 31). A file
 * write that started is exactly once: the journal holds the file's version before and the one
 * intended, so the retry finds the write done, not done (and does it), torn (and finishes it), or
 * overtaken by another change (a conflict the model is told of).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type FileVersion, sameVersion, textVersion } from './tools/files';
import type { ToolEffect } from './tools/types';

export interface JournalEntry {
  toolUseId: string;
  conversationId: string;
  name: string;
  input: unknown;
  status: 'recorded' | 'started' | 'finished' | 'cancelled';
  /**
   * 2: written in phases (issue 24): `recorded` before the call runs, `started` with its effect.
   * Absent: an older entry, whose `started` was written before the tool began, so it may not have.
   */
  phases?: 2;
  /** What the call began to change (absent: it never began, or an older entry). */
  effect?: ToolEffect;
  /**
   * The workspace checkpoint taken before the call first ran (issue 31; absent: none was taken —
   * checkpoints off, or the store failed). Written before the effect can begin, and kept by every
   * later attempt: a retry never takes another, the workspace may hold a partial effect by then.
   */
  checkpointId?: string;
  /** The checkpoint captured every file of the workspace and its git state (nothing skipped, no warning). */
  checkpointComplete?: boolean;
  /** How long taking it took (ms). */
  checkpointMs?: number;
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
  const slug =
    resolved
      .replace(/[^a-zA-Z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(-60) || 'root';
  const hash = createHash('sha256').update(resolved).digest('hex').slice(0, 10);
  return path.join(stateDir, 'workspaces', `${slug}-${hash}`);
}

let temporaryCounter = 0;

export class ToolJournal {
  constructor(private readonly stateDir: string) {}

  private file(cwd: string, conversationId: string, toolUseId: string): string {
    return path.join(workspaceStateDir(this.stateDir, cwd), 'journal', conversationDirectory(conversationId), `${safeName(toolUseId)}.json`);
  }

  async get(cwd: string, conversationId: string, toolUseId: string): Promise<JournalEntry | undefined> {
    return readEntry(this.file(cwd, conversationId, toolUseId));
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

/** What a retry does with a call whose previous attempt did not finish (pure; issue 24). */
export type Resumption =
  /** It never began to change anything: run it. */
  | { kind: 'run' }
  /** It may have partly run (a command, or an entry from before phases): not run again, the model is told. */
  | { kind: 'at-most-once' }
  /**
   * A contained command that may have partly run, with a complete checkpoint from before it, on
   * this host: restore the checkpoint (once its processes are stopped) and run it again.
   */
  | { kind: 'restore-and-run'; checkpointId: string }
  /** A file write: see {@link interruptedWriteOutcome}. */
  | { kind: 'file'; effect: Extract<ToolEffect, { kind: 'file' }> };

/**
 * `host` is this worker's: an attempt that ran on another host may still be running there, where
 * nothing here can stop it, so it is not restored under it.
 */
export function resumption(previous: JournalEntry, host: string): Resumption {
  if (previous.phases !== 2) return { kind: 'at-most-once' };
  if (previous.effect === undefined) return { kind: 'run' };
  if (previous.effect.kind === 'file') return { kind: 'file', effect: previous.effect };
  if (previous.effect.contained === true && previous.checkpointId !== undefined && previous.checkpointComplete === true && previous.host === host) {
    return { kind: 'restore-and-run', checkpointId: previous.checkpointId };
  }
  return { kind: 'at-most-once' };
}

/**
 * Where an interrupted file write stands, from the file's version now: `done` (it holds the
 * intended content), `not-begun` (it holds what it held before: run the call again, which computes
 * the same write), `torn` (it holds a prefix of the intended content — the write was cut after it
 * truncated the file — and the journal kept the text to finish it), or `conflict` (anything else:
 * something else changed the file since).
 */
export function interruptedWriteOutcome(effect: Extract<ToolEffect, { kind: 'file' }>, now: FileVersion): 'done' | 'not-begun' | 'torn' | 'conflict' {
  if (sameVersion(now, effect.after)) return 'done';
  if (sameVersion(now, effect.before)) return 'not-begun';
  if (
    effect.afterText !== undefined &&
    now.exists &&
    !('other' in now) &&
    effect.after.exists &&
    !('other' in effect.after) &&
    now.bytes < effect.after.bytes
  ) {
    const prefix = Buffer.from(effect.afterText, 'utf8').subarray(0, now.bytes);
    if (sameVersion(now, textVersion(prefix))) return 'torn';
  }
  return 'conflict';
}

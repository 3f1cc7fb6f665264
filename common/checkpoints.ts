/**
 * Workspace checkpoints as the workflow and the clients see them (issue 31; the store is
 * activities/checkpoints/store.ts, docs/checkpoints.md). A conversation records a checkpoint's id
 * — a commit id in the workspace's store — never its content.
 */
import type { TranscriptMessage } from './messages';

/** One point a conversation can be rewound to: just before its n-th prompt. */
export interface RewindPoint {
  /** 1-based: 1 is the conversation's start. */
  n: number;
  /** The prompt's message uuid in the transcript (the conversation is cut before it). */
  inputUuid: string;
  /** Workflow time the prompt started its query (ms since epoch). */
  at: number;
  /** The prompt as typed, up to REWIND_TEXT_MAX_CHARS (offered again after a rewind). */
  text: string;
  /** The workspace checkpoint taken just before the prompt; absent when none could be taken. */
  checkpointId?: string;
  /** Why there is no checkpoint. */
  checkpointError?: string;
  /** The run that recorded the prompt (its history holds the transcript before a later compaction). */
  runId: string;
}

export const REWIND_TEXT_MAX_CHARS = 2_000;

/** What a rewind restores: `both` (default), the files only, or the conversation only. */
export const REWIND_MODES = ['both', 'code', 'conversation'] as const;
export type RewindMode = (typeof REWIND_MODES)[number];

export interface RewindRequest {
  /** The prompt to rewind to (1-based): the state just before it comes back. */
  to: number;
  mode?: RewindMode;
}

export interface RewindOutcome {
  to: number;
  mode: RewindMode;
  /** The rewound prompt's text, to edit and send again. */
  prompt: string;
  /** Messages taken out of the transcript (conversation rewinds). */
  messagesRemoved?: number;
  /** The transcript came back from before a compaction. */
  uncompacted?: boolean;
  /** Files written and removed (code rewinds). */
  filesRestored?: number;
  filesRemoved?: number;
  gitState?: boolean;
  /** The checkpoint of the workspace as it was just before the rewind: a rewind can itself be undone. */
  undoCheckpointId?: string;
  warnings: string[];
}

/** What continue-as-new carries of the rewinds (workflows/session/rewinds.ts). */
export interface RewindsState {
  points: RewindPoint[];
  /** Rewinds so far (the last few): what each did. */
  history: Array<RewindOutcome & { at: number }>;
}

/** One rewind point as `durable-agent checkpoints` and `/rewind` list it. */
export interface RewindPointListing extends RewindPoint {
  /** Files that differ between the checkpoint and the workspace now (undefined: unknown). */
  filesChangedSince?: number;
  changedPaths?: string[];
}

/** The rewind points as a list: number, time, first line, files changed since. */
export function formatRewindPoints(points: readonly RewindPointListing[]): string {
  if (points.length === 0) return 'No prompts yet.';
  return points
    .map((point) => {
      const time = new Date(point.at).toISOString().replace('T', ' ').slice(0, 19);
      const line = point.text.split('\n', 1)[0];
      const files = !point.checkpointId
        ? 'no checkpoint: conversation only'
        : point.filesChangedSince === undefined
          ? 'files changed since: unknown'
          : point.filesChangedSince === 0
            ? 'no files changed since'
            : `${point.filesChangedSince} file${point.filesChangedSince === 1 ? '' : 's'} changed since${point.changedPaths?.length ? ` (${point.changedPaths.slice(0, 5).join(', ')}${point.filesChangedSince > 5 ? ', …' : ''})` : ''}`;
      return `${String(point.n).padStart(3)}  ${time}  ${line.length > 60 ? `${line.slice(0, 59)}…` : line}  — ${files}`;
    })
    .join('\n');
}

/** `durable-agent fork <id> [--at n] [--cwd dir]`: what the parent is asked for. */
export interface ForkRequest {
  /** Fork from just before this prompt (default: the conversation as it is now). */
  at?: number;
  /** The fork's workspace (relative: to the parent's); default `<parent's cwd>-fork-<8 hex>` beside it. */
  cwd?: string;
}

/** What the parent answers: the fork's workspace, made on the workspace's host, and where its conversation starts. */
export interface ForkOutcome {
  parentConversationId: string;
  at?: number;
  /** The fork's workspace. */
  cwd: string;
  files: number;
  /** The fork's workspace is a git repository of its own (the parent's was one). */
  git: boolean;
  checkpointId: string;
  /** The transcript the fork continues (its last compact boundary on). */
  messages: TranscriptMessage[];
  /** The parent's conversation config, for the fork to start with (its cwd replaced). */
  config: unknown;
}

// ---- activities (on the workspace's host) ----

export interface CheckpointWorkspaceInput {
  cwd: string;
  conversationId: string;
  prompt: number;
  reason: 'prompt' | 'before-rewind';
  /** Identifies the request, so a retried activity finds the checkpoint an earlier attempt took. */
  requestId: string;
}

export interface CheckpointWorkspaceResult {
  id: string;
  files: number;
  ms: number;
  /** Paths not captured (oversized, special files, nested repositories). */
  skipped: number;
  warnings: string[];
}

export interface RestoreWorkspaceInput {
  cwd: string;
  conversationId: string;
  checkpointId: string;
  /** The rewind's request id: the checkpoint taken before restoring is found again on a retry. */
  requestId: string;
  prompt: number;
}

export interface RestoreWorkspaceResult {
  undoCheckpointId: string;
  restored: number;
  removed: number;
  gitState: boolean;
  leftAlone: string[];
  warnings: string[];
}

export interface WorkspaceChangesInput {
  cwd: string;
  checkpointIds: string[];
}

/** Per checkpoint id, the paths that differ from the workspace now (at most 20 listed), or an error. */
export type WorkspaceChangesResult = Record<string, { count: number; paths: string[] } | { error: string }>;

export const CHANGED_PATHS_LISTED = 20;

export interface ForkWorkspaceInput {
  cwd: string;
  conversationId: string;
  /** The checkpoint to fork from; absent: one of the workspace as it is now. */
  checkpointId?: string;
  targetDir?: string;
  requestId: string;
}

export interface ForkWorkspaceResult {
  cwd: string;
  files: number;
  git: boolean;
  checkpointId: string;
}

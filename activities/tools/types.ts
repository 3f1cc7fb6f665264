/** Types shared by the tool implementations and their dispatcher (own module, so neither imports the other). */
import type { AskDomain } from '../sandbox-network';
import type { ToolAccess } from '../../common/permission-facts';
import type { SettingSource } from '../../common/permissions';
import type { FileVersion } from './files';

/** What a tool needs from its caller. */
export interface ToolExecutionContext {
  /** Directory relative paths resolve against and Bash runs in. */
  cwd: string;
  /** Aborting cancels the tool; executeTool then throws the signal's reason. */
  signal: AbortSignal;
  /** Streamed output (Bash), e.g. for heartbeats and live status. */
  onProgress?: (chunk: string) => void;
  /**
   * Environment variables every process the tool starts inherits (Bash). The journal marks
   * commands with the tool_use id, so a retry can find what a dead worker left running.
   */
  processEnv?: Record<string, string>;
  /**
   * What the file tools enforce where they act (issue 17 §4): real paths re-checked, writes
   * without following a swapped-in link, Grep/Glob skipping denied files and files outside the
   * working directories. Absent (older callers, recorded histories): no such checks.
   */
  access?: ToolAccess;
  /** Working directories besides cwd (`--add-dir`, settings): writable inside Bash's sandbox. */
  additionalDirectories?: readonly string[];
  /** `--setting-sources`: which settings files' `sandbox` keys apply (default all). */
  settingSources?: readonly SettingSource[];
  /** Claude Code's `sandbox` settings object from the conversation's config (trusted like the user's settings). */
  sandboxConfig?: unknown;
  /** The worker's state directory, hidden from Bash but for this workspace's persisted results. */
  stateDir?: string;
  /**
   * Called (and awaited) just before the tool starts changing anything: the tool journal records
   * what is about to happen, so a retry after a crash knows whether it began (issue 24). Throws to
   * stop the tool (another attempt took the call over). Absent: nothing is journaled.
   */
  beginEffect?: (effect: ToolEffect) => Promise<void>;
  /**
   * Bash in the sandbox: asks the conversation whether the command may reach a domain not in
   * `sandbox.network.allowedDomains` (ToolAccess.askForDomains). Absent: such domains are refused.
   */
  askDomain?: AskDomain;
  /**
   * WebFetch: a small fast model (Claude Code's Haiku-class) answers `prompt` (the page and the
   * call's question) in plain text. Absent (no model client on this worker): the page itself is the answer.
   */
  readWithSmallModel?: (prompt: string, signal: AbortSignal) => Promise<string>;
}

/** Up to this many characters of a file tool's intended content are journaled, to finish a torn write. */
export const JOURNALED_TEXT_MAX_CHARS = 1024 * 1024;

/**
 * What a mutating tool is about to do. A command (`process`) cannot be inspected afterwards, so it
 * runs at most once — unless it is contained and a complete checkpoint was taken before it, which a
 * retry restores before running it again (exactly once); a file write can (`file`): the file holds `before`, `after`, or something else.
 */
export type ToolEffect =
  | {
      kind: 'process';
      /**
       * Sandboxed with the network off and writable only inside the workspace (SandboxLaunch.contained):
       * a checkpoint of the workspace taken before it undoes whatever part of it ran.
       */
      contained?: boolean;
    }
  | {
      kind: 'file';
      /** The real path written. */
      path: string;
      before: FileVersion;
      after: FileVersion;
      /** The content written, when at most JOURNALED_TEXT_MAX_CHARS (a crash mid-write leaves a prefix of it). */
      afterText?: string;
      /** The result the call returns once the write is done. */
      result: ToolExecutionResult;
    };

/** A tool_result's content and is_error flag. */
export interface ToolExecutionResult {
  content: string;
  isError: boolean;
}

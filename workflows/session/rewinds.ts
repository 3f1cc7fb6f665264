/**
 * Rewind points (issue 31, Claude Code's `/rewind` with Bash edits included): a checkpoint of the
 * workspace just before each prompt starts its query, its id and the prompt recorded here (never
 * the content), carried across continue-as-new. A rewind to prompt n puts back the files from that
 * checkpoint (after a checkpoint of the workspace as it is, so the rewind can itself be undone)
 * and/or cuts the transcript to just before the prompt — from this run's transcript, or, when a
 * compaction of an earlier run replaced it, from the run that recorded the prompt ("un-compact").
 * The `rewind` update is the labelled event in the Temporal UI; nothing in history is lost.
 */
import { ApplicationFailure, uuid4, workflowInfo } from '@temporalio/workflow';
import {
  REWIND_MODES,
  REWIND_TEXT_MAX_CHARS,
  type RewindMode,
  type RewindOutcome,
  type RewindPoint,
  type RewindPointListing,
  type RewindRequest,
  type RewindsState,
  type ForkOutcome,
  type ForkRequest,
} from '../../common/checkpoints';
import { MAX_AGENT_TRANSCRIPT_BYTES, transcriptToContinue } from '../../common/agent-transcript';
import type { ConversationConfig } from '../../common/config';
import type { TranscriptMessage } from '../../common/messages';
import type { CarriedState, ConversationEvent, PendingInput } from '../definitions';
import { AGENT_TRANSCRIPT_OPTIONS, activities, checkpointOptions } from '../deps/activity-options';
import { failureMessage } from '../deps/failures';
import type { Transcript } from '../transcript';

const HISTORY_KEPT = 20;

export interface RewindsContext {
  readonly conversationId: string;
  readonly transcript: Transcript;
  /** Off for subagents (their parent's prompts are the rewind points) and with `checkpoints: false`. */
  readonly enabled: boolean;
  config(): ConversationConfig;
  pushEvent(message: ConversationEvent['message']): void;
}

/** A rewind request the update refuses (pure: the validator's checks). */
export function rewindRequestProblem(request: unknown, points: readonly RewindPoint[]): string | undefined {
  if (typeof request !== 'object' || request === null) return 'rewind takes {"to": <prompt number>, "mode"?: "both" | "code" | "conversation"}';
  const { to, mode } = request as Partial<RewindRequest>;
  if (mode !== undefined && !REWIND_MODES.includes(mode)) return `rewind: mode must be one of ${REWIND_MODES.join(', ')}, got ${JSON.stringify(mode)}`;
  if (points.length === 0) return 'This conversation has no prompt to rewind to yet.';
  if (typeof to !== 'number' || !Number.isInteger(to) || to < 1 || to > points.length) {
    return `rewind: "to" must be a prompt number from 1 to ${points.length}, got ${JSON.stringify(to)}`;
  }
  const point = points[to - 1];
  if ((mode ?? 'both') !== 'conversation' && !point.checkpointId) {
    return (
      `No checkpoint of the workspace was taken before prompt ${to}${point.checkpointError ? ` (${point.checkpointError})` : ''}: ` +
      'its files cannot be restored. Rewind the conversation only (mode "conversation", --conversation).'
    );
  }
  return undefined;
}

/** The first line of a prompt, for listings. */
function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}

export class SessionRewinds {
  private readonly state: RewindsState;

  constructor(
    private readonly context: RewindsContext,
    carried: CarriedState | undefined,
  ) {
    this.state = { points: [...(carried?.rewinds?.points ?? [])], history: [...(carried?.rewinds?.history ?? [])] };
  }

  get points(): readonly RewindPoint[] {
    return this.state.points;
  }

  carried(): Partial<CarriedState> {
    return this.state.points.length > 0 || this.state.history.length > 0 ? { rewinds: this.state } : {};
  }

  /**
   * A query is about to start from `pending` (typed as `typed`): the workspace as it is now is
   * the point a rewind to this prompt goes back to. A checkpoint that cannot be taken is said
   * once (in the feed) and recorded; the prompt is still a point for the conversation.
   */
  async beforePrompt(pending: PendingInput, typed: string): Promise<void> {
    if (!this.context.enabled) return;
    const config = this.context.config();
    const n = this.state.points.length + 1;
    const point: RewindPoint = { n, inputUuid: pending.uuid, at: Date.now(), text: typed.slice(0, REWIND_TEXT_MAX_CHARS), runId: workflowInfo().runId };
    if (config.checkpoints) {
      try {
        const taken = await activities(checkpointOptions(config, `Checkpoint before prompt ${n}`)).checkpointWorkspace({
          cwd: config.cwd,
          conversationId: this.context.conversationId,
          prompt: n,
          reason: 'prompt',
          requestId: pending.uuid,
        });
        point.checkpointId = taken.id;
      } catch (error) {
        point.checkpointError = failureMessage(error);
        const previous = this.state.points.at(-1);
        if (!previous || previous.checkpointError === undefined) {
          this.context.pushEvent({
            type: 'system',
            uuid: uuid4(),
            level: 'warning',
            content: `No workspace checkpoint before this prompt (a rewind can restore the conversation, not the files): ${point.checkpointError}`,
          });
        }
      }
    }
    this.state.points.push(point);
  }

  /** Throws what the `rewind` update's validator refuses. */
  validate(request: unknown): void {
    const problem = rewindRequestProblem(request, this.state.points);
    if (problem) throw ApplicationFailure.nonRetryable(problem, 'InvalidRewindRequest');
  }

  /** The points with what changed in the workspace since each checkpoint (`checkpoints` update). */
  async listing(): Promise<RewindPointListing[]> {
    const config = this.context.config();
    const ids = this.state.points.flatMap((point) => (point.checkpointId ? [point.checkpointId] : []));
    let changes: Awaited<ReturnType<ReturnType<typeof activities>['workspaceChanges']>> = {};
    if (ids.length > 0) {
      try {
        changes = await activities(checkpointOptions(config, 'Files changed since each checkpoint')).workspaceChanges({ cwd: config.cwd, checkpointIds: ids });
      } catch {
        changes = {};
      }
    }
    return this.state.points.map((point) => {
      const changed = point.checkpointId ? changes[point.checkpointId] : undefined;
      return changed && 'count' in changed ? { ...point, filesChangedSince: changed.count, changedPaths: changed.paths } : { ...point };
    });
  }

  /**
   * The transcript just before a point's prompt: this run's, or — when a compaction of an earlier
   * run replaced it — that run's (its query, answered by replaying its history).
   */
  private async transcriptBefore(point: RewindPoint): Promise<{ messages: readonly TranscriptMessage[]; uncompacted: boolean; prompt?: string }> {
    const { transcript } = this.context;
    const index = transcript.messages.findIndex((message) => message.uuid === point.inputUuid);
    if (index >= 0) {
      const message = transcript.messages[index];
      const prompt = message.type === 'user' && typeof message.message.content === 'string' && !message.command ? message.message.content : undefined;
      return { messages: transcript.messages.slice(0, index), uncompacted: index < transcript.windowStart, prompt };
    }
    const read = await activities({ ...AGENT_TRANSCRIPT_OPTIONS, summary: `Transcript before prompt ${point.n} (run ${point.runId})` }).readRunTranscript({
      workflowId: workflowInfo().workflowId,
      runId: point.runId,
      beforeUuid: point.inputUuid,
    });
    if ('problem' in read)
      throw ApplicationFailure.nonRetryable(`The conversation before prompt ${point.n} cannot be read: ${read.problem}`, 'RewindUnavailable');
    return { messages: read.messages, uncompacted: true };
  }

  /** Throws what the `fork` update's validator refuses. */
  validateFork(request: unknown): void {
    if (typeof request !== 'object' || request === null)
      throw ApplicationFailure.nonRetryable('fork takes {"at"?: <prompt number>, "cwd"?: "dir"}', 'InvalidForkRequest');
    const { at, cwd } = request as ForkRequest;
    if (cwd !== undefined && (typeof cwd !== 'string' || cwd.trim() === ''))
      throw ApplicationFailure.nonRetryable('fork: cwd must be a directory path', 'InvalidForkRequest');
    if (at === undefined) return;
    const problem = rewindRequestProblem({ to: at, mode: 'both' }, this.state.points);
    if (problem) throw ApplicationFailure.nonRetryable(problem.replace(/^rewind: "to"/, 'fork: "at"'), 'InvalidForkRequest');
  }

  /**
   * `fork` (issue 31): a new workspace from the checkpoint before prompt `at` (default: one of the
   * workspace now), made on the workspace's host, and the transcript the fork continues; the
   * client starts the fork's conversation with them. The parent changes in nothing.
   */
  async fork(request: ForkRequest, config: unknown): Promise<ForkOutcome> {
    const point = request.at === undefined ? undefined : this.state.points[request.at - 1];
    const messages = forkTranscript(this.context.conversationId, point ? (await this.transcriptBefore(point)).messages : this.context.transcript.messages);
    const current = this.context.config();
    const made = await activities(checkpointOptions(current, point ? `Fork the workspace at prompt ${point.n}` : 'Fork the workspace')).forkWorkspace({
      cwd: current.cwd,
      conversationId: this.context.conversationId,
      ...(point?.checkpointId && { checkpointId: point.checkpointId }),
      ...(request.cwd && { targetDir: request.cwd }),
      requestId: uuid4(),
    });
    this.context.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: `Forked${point ? ` at prompt ${point.n}` : ''} into ${made.cwd}.` });
    return { parentConversationId: this.context.conversationId, ...(point && { at: point.n }), ...made, messages, config };
  }

  /**
   * seed-level `/rewind`: the workspace and/or the conversation as they were just before prompt
   * `request.to` (validated). The conversation is read first (it may come from an earlier run),
   * so a rewind that cannot restore it changes no file.
   */
  async rewind(request: RewindRequest): Promise<RewindOutcome> {
    const config = this.context.config();
    const mode: RewindMode = request.mode ?? 'both';
    const point = this.state.points[request.to - 1];
    const { transcript } = this.context;
    const outcome: RewindOutcome = { to: point.n, mode, prompt: point.text, warnings: [] };

    let before: readonly TranscriptMessage[] | undefined;
    if (mode !== 'code') {
      const found = await this.transcriptBefore(point);
      before = found.messages;
      outcome.uncompacted = found.uncompacted;
      if (found.prompt !== undefined) outcome.prompt = found.prompt;
    }

    if (mode !== 'conversation') {
      const restored = await activities(checkpointOptions(config, `Rewind files to before prompt ${point.n}`)).restoreWorkspace({
        cwd: config.cwd,
        conversationId: this.context.conversationId,
        checkpointId: point.checkpointId!,
        requestId: uuid4(),
        prompt: point.n,
      });
      Object.assign(outcome, {
        filesRestored: restored.restored,
        filesRemoved: restored.removed,
        gitState: restored.gitState,
        undoCheckpointId: restored.undoCheckpointId,
      });
      outcome.warnings.push(...restored.warnings);
      if (restored.leftAlone.length > 0) outcome.warnings.push(`Left as they are (not captured): ${restored.leftAlone.slice(0, 10).join(', ')}`);
    }

    if (before) {
      const removed = transcript.length - before.length;
      transcript.rewindTo(before);
      outcome.messagesRemoved = Math.max(0, removed);
      // The prompts from n on are no longer in the conversation: the next prompt is n again.
      this.state.points.length = point.n - 1;
    }
    this.state.history = [...this.state.history, { ...outcome, at: Date.now() }].slice(-HISTORY_KEPT);
    this.context.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: rewindSummary(outcome) });
    return outcome;
  }
}

/** The fork's transcript: its last compact boundary and what follows (what a resumed conversation starts from). */
function forkTranscript(conversationId: string, messages: readonly TranscriptMessage[]): TranscriptMessage[] {
  if (messages.length === 0) return [];
  const resumable = transcriptToContinue(conversationId, messages, MAX_AGENT_TRANSCRIPT_BYTES);
  if ('problem' in resumable) throw ApplicationFailure.nonRetryable(`Cannot fork: ${resumable.problem}`, 'ForkUnavailable');
  return resumable.messages;
}

/** One line for the feed: what a rewind did. */
export function rewindSummary(outcome: RewindOutcome): string {
  const parts: string[] = [];
  if (outcome.mode !== 'conversation') {
    parts.push(
      `files restored (${outcome.filesRestored ?? 0} written, ${outcome.filesRemoved ?? 0} removed${outcome.gitState ? ', git state put back' : ''}; undo: checkpoint ${outcome.undoCheckpointId})`,
    );
  }
  if (outcome.mode !== 'code')
    parts.push(`conversation cut before it (${outcome.messagesRemoved ?? 0} messages${outcome.uncompacted ? ', un-compacted' : ''})`);
  return `Rewound to before prompt ${outcome.to} "${firstLine(outcome.prompt).slice(0, 80)}": ${parts.join('; ')}.`;
}

/**
 * Compaction's pure parts (seed §2.7 compactConversation, and what Claude Code was measured to
 * send — shared/design/claude-code-observed.md): reading the summary out of the model's answer,
 * the boundary and summary messages that replace the window, the recently read files restored
 * after it, and the fallback for a compaction request that is itself too long (drop the oldest
 * rounds). The model call, with its summary instruction, is the `compactConversation` activity.
 */
import type { CompactBoundaryMessage, TextBlock, TranscriptMessage, UserMessage } from '../../common/messages';
import { fitMaxTokens, roughTokenCount } from './auto';
import { roundCutPoints } from './snip';

/** Output cap of a compaction request (Claude Code sends 32000). */
export const COMPACT_MAX_OUTPUT_TOKENS = 32_000;
/** Recently read files re-attached after a compaction, and their token budget (Claude Code's caps). */
export const POST_COMPACT_MAX_FILES_TO_RESTORE = 5;
export const POST_COMPACT_TOKEN_BUDGET = 50_000;
export const POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000;

/** The `<summary>` of a compaction answer (without the `<analysis>`), or undefined when there is none. */
export function extractSummary(text: string): string | undefined {
  const tagged = /<summary>([\s\S]*?)(?:<\/summary>|$)/i.exec(text);
  const summary = (tagged ? tagged[1] : text.replace(/<analysis>[\s\S]*?<\/analysis>/gi, '')).trim();
  return summary === '' ? undefined : summary;
}

/** A file the model read, with its latest content as the Read tool returned it. */
export interface RestoredFile {
  path: string;
  content: string;
}

/**
 * The recently read files to re-attach after a compaction: the latest Read result of each of
 * the last few files read (newest first), each and all within a token budget. Taken from the
 * transcript, so it needs no access to the workspace's host.
 */
export function recentlyReadFiles(window: readonly TranscriptMessage[]): RestoredFile[] {
  const reads = new Map<string, string>(); // tool_use id → file path
  for (const message of window) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) {
      const input = block.type === 'tool_use' ? (block.input as { file_path?: unknown }) : undefined;
      if (block.type === 'tool_use' && block.name === 'Read' && typeof input?.file_path === 'string') reads.set(block.id, input.file_path);
    }
  }
  const latest = new Map<string, string>(); // path → content, insertion = oldest first
  for (const message of window) {
    if (message.type !== 'user' || typeof message.message.content === 'string') continue;
    for (const block of message.message.content) {
      const file = block.type === 'tool_result' && !block.is_error ? reads.get(block.tool_use_id) : undefined;
      if (!file || block.type !== 'tool_result') continue;
      const text = typeof block.content === 'string' ? block.content : block.content.map((part) => part.text).join('');
      latest.delete(file);
      latest.set(file, text);
    }
  }
  const restored: RestoredFile[] = [];
  let budget = POST_COMPACT_TOKEN_BUDGET;
  for (const [file, content] of [...latest.entries()].reverse()) {
    if (restored.length >= POST_COMPACT_MAX_FILES_TO_RESTORE) break;
    const capped =
      roughTokenCount(content) > POST_COMPACT_MAX_TOKENS_PER_FILE ? `${content.slice(0, POST_COMPACT_MAX_TOKENS_PER_FILE * 4)}\n… (truncated)` : content;
    const cost = roughTokenCount(capped);
    if (cost > budget) continue;
    budget -= cost;
    restored.push({ path: file, content: capped });
  }
  return restored;
}

/** The latest prompt a person typed in the window (not tool results, not nudges). */
export function latestUserRequest(window: readonly TranscriptMessage[]): string | undefined {
  for (let i = window.length - 1; i >= 0; i--) {
    const message = window[i];
    if (message.type !== 'user' || message.isMeta || message.isCompactSummary) continue;
    if (typeof message.message.content === 'string') return message.message.content;
    const text = message.message.content
      .filter((block): block is TextBlock => block.type === 'text')
      .map((block) => block.text)
      .join('\n');
    if (text.trim()) return text;
  }
  return undefined;
}

/**
 * The messages that replace a compacted window: the boundary, then one user message with the
 * summary, the latest request verbatim, and the recently read files as reminders (what the
 * next request starts from, as Claude Code's does).
 */
export function buildPostCompactMessages(options: {
  summary: string;
  window: readonly TranscriptMessage[];
  trigger: CompactBoundaryMessage['trigger'];
  preTokens: number;
  now: number;
  uuid: () => string;
}): { boundary: CompactBoundaryMessage; summaryMessage: UserMessage } {
  const request = latestUserRequest(options.window);
  const blocks: TextBlock[] = [
    {
      type: 'text',
      text:
        'This session is being continued from an earlier conversation that ran out of context. ' +
        "The summary below covers the earlier part; the full history is kept in the conversation's workflow history.\n\n" +
        `${options.summary}\n\n` +
        'Continue from where the work left off without asking further questions, and without acknowledging this summary.',
    },
  ];
  if (request) blocks.push({ type: 'text', text: `<system-reminder>\nThe user's latest request, verbatim:\n${request}\n</system-reminder>` });
  for (const file of recentlyReadFiles(options.window)) {
    blocks.push({ type: 'text', text: `<system-reminder>\nContents of ${file.path} as last read before the compaction:\n${file.content}\n</system-reminder>` });
  }
  const summaryMessage: UserMessage = { type: 'user', uuid: options.uuid(), isMeta: true, isCompactSummary: true, message: { role: 'user', content: blocks } };
  const postTokens = roughTokenCount(JSON.stringify(blocks));
  const boundary: CompactBoundaryMessage = {
    type: 'compact_boundary',
    uuid: options.uuid(),
    trigger: options.trigger,
    preTokens: options.preTokens,
    postTokens,
    messagesSummarized: options.window.length,
    timestamp: options.now,
  };
  return { boundary, summaryMessage };
}

/**
 * seed §2.7 fallback for a compaction request that is itself too long: leave out the oldest
 * rounds. Returns how many messages of the window to skip — at a round boundary, so no
 * tool_use loses its result — or undefined when nothing more can go (the last round stays).
 */
export function dropOldestRounds(window: readonly TranscriptMessage[], alreadySkipped: number, fraction = 0.2): number | undefined {
  const points = roundCutPoints(window).filter((point) => point > alreadySkipped && point < window.length - 1);
  if (points.length === 0) return undefined;
  const target = alreadySkipped + Math.max(1, Math.floor((window.length - alreadySkipped) * fraction));
  return points.find((point) => point >= target) ?? points[points.length - 1];
}

/** What the compaction model call answered (the `compactConversation` activity, as data). */
export type CompactResponse =
  { type: 'summary'; text: string } | { type: 'prompt_too_long'; errorMessage: string } | { type: 'error'; errorMessage: string } | { type: 'aborted' };

/** A compaction request: the window by reference, minus the oldest `skip` messages. */
export interface CompactRequestParams {
  trigger: CompactBoundaryMessage['trigger'];
  /** The transcript by reference; the window starts at `from`, and `skip` more are left out. */
  transcript: { length: number; digest: string; from: number };
  skip: number;
  customInstructions?: string;
  /** Output cap of the request (fitted to the room left in the window). */
  maxTokens: number;
}

export interface CompactDeps {
  uuid(): string;
  now(): number;
  compactConversation(request: CompactRequestParams): Promise<CompactResponse>;
}

/** What a compaction did; `error` says why it did not. */
export interface CompactOutcome {
  compacted: boolean;
  trigger: CompactBoundaryMessage['trigger'];
  preTokens: number;
  postTokens?: number;
  messagesSummarized?: number;
  error?: string;
  /** Nothing could be compacted (an empty or one-message window): not a failure of the model. */
  nothingToCompact?: boolean;
}

/** Tries of a compaction whose request is too long, each leaving out more of the oldest rounds. */
export const MAX_COMPACT_PTL_RETRIES = 3;

/**
 * seed §2.7 compactConversation: asks the model for a summary of the window and yields the
 * boundary and the summary message (the session appends them: the transcript then sends only
 * them and what follows). Too long itself → the oldest rounds are left out and it tries again.
 */
export async function* compactWindow(
  transcript: { window(): TranscriptMessage[]; ref(): { length: number; digest: string; from?: number } },
  deps: CompactDeps,
  options: { trigger: CompactBoundaryMessage['trigger']; preTokens: number; customInstructions?: string; maxTokens?: number },
): AsyncGenerator<CompactBoundaryMessage | UserMessage, CompactOutcome> {
  const window = transcript.window();
  const base = { trigger: options.trigger, preTokens: options.preTokens };
  if (window.filter((message) => message.type !== 'compact_boundary').length < 2) {
    return { ...base, compacted: false, nothingToCompact: true, error: 'Not enough conversation to compact yet.' };
  }
  const ref = transcript.ref();
  let skip = 0;
  for (let attempt = 0; attempt <= MAX_COMPACT_PTL_RETRIES; attempt++) {
    const response = await deps.compactConversation({
      trigger: options.trigger,
      transcript: { length: ref.length, digest: ref.digest, from: ref.from ?? 0 },
      skip,
      customInstructions: options.customInstructions,
      maxTokens: options.maxTokens ?? COMPACT_MAX_OUTPUT_TOKENS,
    });
    if (response.type === 'prompt_too_long') {
      const next = dropOldestRounds(window, skip);
      if (next === undefined) return { ...base, compacted: false, error: `The compaction request itself is too long: ${response.errorMessage}` };
      skip = next;
      continue;
    }
    if (response.type === 'aborted') return { ...base, compacted: false, error: 'Compaction interrupted by user.' };
    if (response.type === 'error') return { ...base, compacted: false, error: `Compaction failed: ${response.errorMessage}` };
    const summary = extractSummary(response.text);
    if (!summary) return { ...base, compacted: false, error: 'Compaction failed: the model returned no summary.' };
    const { boundary, summaryMessage } = buildPostCompactMessages({
      summary,
      window,
      trigger: options.trigger,
      preTokens: options.preTokens,
      now: deps.now(),
      uuid: deps.uuid,
    });
    yield boundary;
    yield summaryMessage;
    return { ...base, compacted: true, postTokens: boundary.postTokens, messagesSummarized: boundary.messagesSummarized };
  }
  return { ...base, compacted: false, error: 'The compaction request stayed too long after leaving out the oldest rounds.' };
}

/**
 * One compaction as the loop runs it (autocompact, reactive) and as a person asks for it (manual):
 * the summary's output cap fitted to what the window leaves.
 */
export function compactTranscript(
  transcript: Parameters<typeof compactWindow>[0],
  deps: CompactDeps,
  options: { trigger: CompactBoundaryMessage['trigger']; preTokens: number; contextWindow: number; customInstructions?: string },
): AsyncGenerator<CompactBoundaryMessage | UserMessage, CompactOutcome> {
  return compactWindow(transcript, deps, {
    trigger: options.trigger,
    preTokens: options.preTokens,
    customInstructions: options.customInstructions,
    maxTokens: fitMaxTokens(COMPACT_MAX_OUTPUT_TOKENS, options.contextWindow, options.preTokens),
  });
}

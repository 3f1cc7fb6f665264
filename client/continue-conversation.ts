/**
 * Claude Code's -c / --continue and -r / --resume <id> (ask and chat; start takes --resume):
 * which conversation to carry on from, and its transcript as the new conversation's start; with
 * --fork-session, a new conversation forked from it now, in its own copy of its workspace.
 */
import type { ConversationClient } from './api';
import { fetchTranscript, transcriptToResume } from './commands/transcript';
import { mostRecentConversation, resolveConversationId } from './commands/list';
import { UsageError } from './usage-error';

/** What a new conversation that continues another starts from. */
export type ResumeInput = { fromConversationId: string; messages: Awaited<ReturnType<typeof fetchTranscript>> };

/** -c and -r together, an empty id, or --fork-session without either: a usage error before anything connects. */
export function checkContinueFlags(values: Record<string, unknown>): void {
  if (values.resume !== undefined && values.continue) throw new UsageError('--continue and --resume: give one of them.');
  if (typeof values.resume === 'string' && values.resume.trim() === '') throw new UsageError('--resume needs a conversation id.');
  if (values['fork-session'] && values.resume === undefined && !values.continue) {
    throw new UsageError('--fork-session forks the conversation --continue or --resume <id> picks: give one of them (e.g. --resume <id> --fork-session).');
  }
}

/** The conversation a fork's parent ended: its workflow is closed and cannot make the fork's workspace. */
export class EndedParentError extends Error {
  override readonly name = 'EndedParentError';
  constructor(readonly conversationId: string) {
    super(
      `Conversation "${conversationId}" has ended: an ended conversation cannot be forked with its files; resume it with -r instead ` +
        `(\`--resume ${conversationId}\` without --fork-session: a new conversation from its transcript, in its workspace; it stays as it is).`,
    );
  }
}

/** What --fork-session made: the new conversation, and its workspace. */
export type ForkedSession = Awaited<ReturnType<ConversationClient['fork']>> & { parentConversationId: string };

/**
 * --fork-session: a new conversation from `parent`'s transcript now, in its own copy of the
 * workspace (a git repository of its own when the parent's is one), linked to its parent, which
 * is unchanged. The parent must be running: its workflow makes the copy (EndedParentError).
 */
export async function forkSession(api: ConversationClient, parent: string, options: { taskQueue: string; prompt?: string }): Promise<ForkedSession> {
  const description = await api.describe(parent);
  if (description.status.name !== 'RUNNING') throw new EndedParentError(parent);
  return { ...(await api.fork(parent, {}, options)), parentConversationId: parent };
}

/** Options that set a conversation's config (besides --cwd, which --continue uses to find the conversation). */
const FORK_KEEPS = new Set(['continue', 'resume', 'fork-session', 'cwd', 'output-format', 'verbose']);

/**
 * A fork starts with its parent's settings (model, permissions, prompts, limits): the options of
 * `values` that would have set them are not applied, and a line says which (undefined: none).
 */
export function forkIgnoredOptionsLine(values: Record<string, unknown>, parent: string): string | undefined {
  const ignored = Object.keys(values).filter((key) => values[key] !== undefined && !FORK_KEEPS.has(key));
  if (ignored.length === 0) return undefined;
  return `Note: the fork keeps ${parent}'s settings; not applied: ${ignored.map((key) => `--${key}`).join(', ')}.`;
}

/** One line about a fork: where it is and what it holds. */
export function describeFork(forked: ForkedSession): string {
  const { fork } = forked;
  return (
    `Forked ${forked.parentConversationId} into ${forked.conversationId}, in ${fork.cwd} ` +
    `(${fork.files} file${fork.files === 1 ? '' : 's'}${fork.git ? ', a git repository of its own' : ''}); ${forked.parentConversationId} is unchanged.`
  );
}

/** The conversation --resume names, or --continue's: the workspace's most recent one. */
export async function continuedConversation(api: ConversationClient, values: Record<string, unknown>, cwd: string): Promise<string | undefined> {
  checkContinueFlags(values);
  if (typeof values.resume === 'string') return resolveConversationId(api, values.resume);
  if (!values.continue) return undefined;
  const latest = await mostRecentConversation(api.client, cwd);
  if (!latest) throw new UsageError(`--continue: no conversation in ${cwd} yet.`);
  return latest;
}

/** The conversation's transcript as a new conversation's start. */
export async function resumeFrom(api: ConversationClient, conversationId: string): Promise<ResumeInput> {
  return { fromConversationId: conversationId, messages: transcriptToResume(conversationId, await fetchTranscript(api, conversationId)) };
}

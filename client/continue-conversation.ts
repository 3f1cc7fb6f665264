/**
 * Claude Code's -c / --continue and -r / --resume <id> (ask and chat; start takes --resume):
 * which conversation to carry on from, and its transcript as the new conversation's start.
 */
import type { ConversationClient } from './api';
import { fetchTranscript, transcriptToResume } from './commands/transcript';
import { mostRecentConversation, resolveConversationId } from './commands/list';
import type { OptionSpec } from './command-line';
import { UsageError } from './usage-error';

/** Claude Code's -c / --continue and -r / --resume <id> (ask and chat). */
export const CONTINUE_OPTIONS: OptionSpec = { continue: { type: 'boolean' }, resume: { type: 'string' } };

/** What a new conversation that continues another starts from. */
export type ResumeInput = { fromConversationId: string; messages: Awaited<ReturnType<typeof fetchTranscript>> };

/** -c and -r together, or an empty id: a usage error before anything connects. */
export function checkContinueFlags(values: Record<string, unknown>): void {
  if (values.resume !== undefined && values.continue) throw new UsageError('--continue and --resume: give one of them.');
  if (typeof values.resume === 'string' && values.resume.trim() === '') throw new UsageError('--resume needs a conversation id.');
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

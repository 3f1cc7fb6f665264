/**
 * `durable-agent transcript <id> [--jsonl]`: exports a conversation — running or ended — as
 * readable text, or one JSON message per line (Claude Code's session files are JSONL too). Also
 * what `start --resume` reads. A query on an ended conversation needs a worker to replay it: when
 * none polls its task queue, that is said plainly instead of waiting.
 */
import { webSearchDisplay } from '../../common/web-search';
import type { TranscriptMessage, UserMessage } from '../../common/messages';
import type { ConversationClient } from '../api';
import { toolArgument, toolCallLine } from '../tool-line';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { sanitizeForTerminal } from '../format';
import { resolveConversationId } from './list';
import { cliCommand } from '../invocation';

/** No worker can answer a query for this conversation right now. */
export class NoWorkerForQueryError extends Error {
  override readonly name = 'NoWorkerForQueryError';
}

/** How long `transcript` waits for a worker to answer before saying none did. */
const QUERY_DEADLINE_MS = 15_000;

/** The conversation's transcript; a clear error when no worker can answer for it. */
export async function fetchTranscript(api: ConversationClient, conversationId: string): Promise<TranscriptMessage[]> {
  const description = await api.describe(conversationId).catch(() => undefined);
  const noWorker = (detail: string) => {
    const state = description?.status.name === 'RUNNING' ? 'is running' : `has ended (${description?.status.name.toLowerCase()})`;
    return new NoWorkerForQueryError(
      `Conversation "${conversationId}" ${state}, but no worker answered for its task queue "${description?.taskQueue}" (${detail}). ` +
        `Its transcript is read by replaying it on a worker: start one (\`${cliCommand('worker')}\`, with DURABLE_AGENT_TASK_QUEUE set to that queue) and run this again; nothing is lost meanwhile.`,
    );
  };
  if (description && (await api.hasPollers(description.taskQueue)) === false) throw noWorker('no worker polls it');
  try {
    return await api.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => api.transcript(conversationId));
  } catch (error) {
    // Not found and the like are clear already; a query nobody answered is not.
    if (!description || (error instanceof Error && error.name === 'ConversationNotFoundError')) throw error;
    throw noWorker(error instanceof Error ? error.message : String(error));
  }
}

/** The transcript as a person reads it: prompts, answers, tool calls and their results, commands. */
export function formatTranscript(messages: readonly TranscriptMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    switch (message.type) {
      case 'compact_boundary':
        parts.push(`── conversation compacted (${message.trigger}): ${message.messagesSummarized} messages summarized ──`);
        break;
      case 'assistant': {
        const { searches, sources } = webSearchDisplay(message.message.content);
        parts.push(...searches);
        for (const block of message.message.content) {
          if (block.type === 'text' && block.text.trim()) parts.push(block.text.trim());
          if (block.type === 'tool_use') parts.push(toolCallLine(block.name, toolArgument(block.name, block.input)));
        }
        if (sources.length > 0) parts.push(sources.join('\n'));
        break;
      }
      case 'user':
        parts.push(...formatUserMessage(message));
        break;
    }
  }
  return parts.join('\n\n');
}

function formatUserMessage(message: UserMessage): string[] {
  const content = message.message.content;
  const text =
    typeof content === 'string'
      ? content
      : content
          .filter((block) => block.type === 'text')
          .map((block) => block.text)
          .join('\n');
  if (message.command?.kind === 'local') {
    const stdout = /<local-command-stdout>([\s\S]*)<\/local-command-stdout>/.exec(text)?.[1] ?? '';
    return [`> /${message.command.name}${message.command.args ? ` ${message.command.args}` : ''}\n${indent(stdout)}`];
  }
  if (message.command) return [`> /${message.command.name}${message.command.args ? ` ${message.command.args}` : ''}`];
  if (message.isCompactSummary) return [`(summary of the earlier conversation)\n${indent(text)}`];
  const parts: string[] = [];
  if (typeof content !== 'string') {
    for (const block of content) {
      if (block.type !== 'tool_result') continue;
      const result = typeof block.content === 'string' ? block.content : block.content.map((part) => part.text).join('');
      parts.push(`  ⎿ ${block.is_error ? 'Error: ' : ''}${result.split('\n').join('\n    ')}`);
    }
  }
  if (text.trim()) parts.push(message.isMeta ? `  (${text.trim().split('\n')[0]})` : `> ${text.trim()}`);
  return parts;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** One JSON message per line. */
export function transcriptJsonl(messages: readonly TranscriptMessage[]): string {
  return messages.map((message) => JSON.stringify(message)).join('\n');
}

/** Largest transcript `start --resume` carries into the new conversation's start input. */
export const MAX_RESUME_BYTES = 1_500_000;

/**
 * What `start --resume` carries: the last compact boundary and everything after it (what the
 * model still sees; the summary stands for the rest), within the start input's size limit.
 */
export function transcriptToResume(conversationId: string, messages: readonly TranscriptMessage[]): TranscriptMessage[] {
  let boundary = messages.length - 1;
  while (boundary >= 0 && messages[boundary].type !== 'compact_boundary') boundary--;
  const carried = messages.slice(Math.max(0, boundary));
  const bytes = Buffer.byteLength(JSON.stringify(carried));
  if (bytes > MAX_RESUME_BYTES) {
    throw new Error(
      `The transcript of "${conversationId}" is ${(bytes / 1e6).toFixed(1)} MB since its last compaction, more than a new conversation can start with ` +
        `(${(MAX_RESUME_BYTES / 1e6).toFixed(1)} MB). Compact it first (\`${cliCommand(`compact ${conversationId}`)}\`), then resume.`,
    );
  }
  return carried;
}

/** The `transcript` command's output. */
export async function exportTranscript(api: ConversationClient, conversationId: string, jsonl: boolean): Promise<string> {
  const messages = await fetchTranscript(api, conversationId);
  if (jsonl) return transcriptJsonl(messages);
  return messages.length > 0 ? formatTranscript(messages) : `(conversation "${conversationId}" has no messages)`;
}

/** `durable-agent transcript [--jsonl] <id>`. */
export async function transcriptCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  return withConnection(async (api) => {
    const text = await exportTranscript(api, await resolveConversationId(api, positionals[0]), Boolean(values.jsonl));
    // JSON escapes control characters itself; sanitizing would change the data.
    io.out(values.jsonl ? text : sanitizeForTerminal(text));
    return 0;
  });
}

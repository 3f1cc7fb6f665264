/**
 * Message helpers for the loop (seed §2.8, §2.11). Pure.
 */
import type { AssistantMessage, SystemMessage, ToolResultBlock, ToolUseBlock, TranscriptMessage, UserMessage } from '../common/messages';
import { toolUseBlocksOf } from '../common/messages';

/** Claude Code's markers in the transcript, so the model knows on the next turn that it was stopped. */
export const INTERRUPT_MESSAGE = '[Request interrupted by user]';
export const INTERRUPT_MESSAGE_FOR_TOOL_USE = '[Request interrupted by user for tool use]';

/** A system line of the loop (for people: the feed and the CLI, never the model). */
export function systemMessage(uuid: string, content: string, level: SystemMessage['level']): SystemMessage {
  return { type: 'system', uuid, level, content };
}

/** The interruption marker a query ends with after an abort. */
export function interruptionMessage(uuid: string, text: string): UserMessage {
  return { type: 'user', uuid, isMeta: true, message: { role: 'user', content: [{ type: 'text', text }] } };
}

/** A user message the model sees and people do not type (a nudge, hook feedback). */
export function metaUserMessage(uuid: string, content: string): UserMessage {
  return { type: 'user', uuid, isMeta: true, message: { role: 'user', content } };
}

/** A user message carrying one tool_result. */
export function createToolResultMessage(
  uuid: string,
  toolUse: Pick<ToolUseBlock, 'id'>,
  content: string,
  isError: boolean,
  sourceAssistantUuid?: string,
): UserMessage {
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: toolUse.id, content };
  if (isError) block.is_error = true;
  return { type: 'user', uuid, sourceAssistantUuid, message: { role: 'user', content: [block] } };
}

/**
 * seed §2.8: every tool_use gets a tool_result, whatever path the loop leaves by — an error
 * result is synthesized for each block of these assistant messages.
 */
export function* yieldMissingToolResultBlocks(assistantMessages: AssistantMessage[], errorMessage: string, uuid: () => string): Generator<UserMessage, void> {
  for (const assistant of assistantMessages) {
    for (const toolUse of toolUseBlocksOf(assistant)) {
      yield createToolResultMessage(uuid(), toolUse, errorMessage, true, assistant.uuid);
    }
  }
}

/**
 * A truncated reply may end inside a tool_use block the model never finished; those calls get
 * error results so the history stays valid for the API.
 */
export function closeDanglingToolUses(assistant: AssistantMessage, uuid: () => string): TranscriptMessage[] {
  const toolUses = toolUseBlocksOf(assistant);
  if (toolUses.length === 0) return [assistant];
  const results: UserMessage = {
    type: 'user',
    uuid: uuid(),
    sourceAssistantUuid: assistant.uuid,
    message: {
      role: 'user',
      content: toolUses.map((block) => ({
        type: 'tool_result' as const,
        tool_use_id: block.id,
        content: 'Output token limit reached before this tool call could run.',
        is_error: true,
      })),
    },
  };
  return [assistant, results];
}

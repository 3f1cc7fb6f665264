/**
 * Message helpers for the loop (seed §2.8, §2.11). Pure.
 */
import type { AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage } from '../common/messages';
import { toolUseBlocksOf } from '../common/messages';

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
export function* yieldMissingToolResultBlocks(
  assistantMessages: AssistantMessage[],
  errorMessage: string,
  uuid: () => string,
): Generator<UserMessage, void> {
  for (const assistant of assistantMessages) {
    for (const toolUse of toolUseBlocksOf(assistant)) {
      yield createToolResultMessage(uuid(), toolUse, errorMessage, true, assistant.uuid);
    }
  }
}

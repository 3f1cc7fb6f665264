/**
 * Message helpers for the loop (seed §2.8, §2.11). Pure.
 */
import type {
  AssistantMessage,
  ToolResultBlock,
  ToolUseBlock,
  TranscriptMessage,
  UserMessage,
} from '../common/messages';
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

/**
 * Thinking signatures are bound to the model that produced them; sending them to another model
 * is a 400 (seed §2.8, fallback). Thinking blocks are dropped from the history sent onward.
 */
export function stripSignatureBlocks(messages: TranscriptMessage[]): TranscriptMessage[] {
  return messages.map((message) => {
    if (message.type !== 'assistant') return message;
    const content = message.message.content.filter(
      (block) => block.type !== 'redacted_thinking' && !(block.type === 'thinking' && block.signature),
    );
    if (content.length === message.message.content.length) return message;
    return { ...message, message: { ...message.message, content } };
  });
}

/** tool_use ids that have no tool_result after them — must be empty for a valid API history. */
export function findDanglingToolUses(messages: TranscriptMessage[]): string[] {
  const answered = new Set<string>();
  for (const message of messages) {
    if (message.type === 'user' && Array.isArray(message.message.content)) {
      for (const block of message.message.content) if (block.type === 'tool_result') answered.add(block.tool_use_id);
    }
  }
  const dangling: string[] = [];
  for (const message of messages) {
    if (message.type === 'assistant') {
      for (const block of toolUseBlocksOf(message)) if (!answered.has(block.id)) dangling.push(block.id);
    }
  }
  return dangling;
}

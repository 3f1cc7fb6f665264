/**
 * `ask --output-format` (Claude Code's `-p --output-format text|json|stream-json`): a pure
 * mapping from our events and result onto the Agent SDK's messages, so where the events come
 * from (the events query today, a stream later) does not matter here.
 *
 * - `text`: the answer only.
 * - `json`: the result message, on one line.
 * - `stream-json` (needs `--verbose`, as in Claude Code): one message per line as they happen —
 *   `system`/`init` first, then `assistant` and `user` messages as the SDK shapes them
 *   (compact boundaries as `system`/`compact_boundary`), then the `result`.
 */
import type { ResultMessage } from '../common/result';
import type { ConversationEvent } from '../workflows/definitions';

export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A message of the SDK's stream (`SDKMessage`), as printed on one stream-json line. */
export type SdkMessage = Record<string, unknown> & { type: string };

/** The SDK's `system`/`init` message: what the session runs with. */
export function systemInitMessage(init: {
  sessionId: string;
  uuid: string;
  cwd: string;
  model: string;
  tools: readonly string[];
  permissionMode?: string;
  agents?: readonly string[];
  slashCommands?: readonly string[];
}): SdkMessage {
  return {
    type: 'system',
    subtype: 'init',
    cwd: init.cwd,
    session_id: init.sessionId,
    tools: [...init.tools],
    mcp_servers: [],
    model: init.model,
    permissionMode: init.permissionMode ?? 'default',
    slash_commands: [...(init.slashCommands ?? [])],
    output_style: 'default',
    agents: [...(init.agents ?? [])],
    uuid: init.uuid,
  };
}

/**
 * The SDK messages one event of the feed stands for: none for what Claude Code keeps to itself
 * in headless mode (the prompt echo, notices, tombstones, progress).
 */
export function sdkMessagesFor(event: ConversationEvent, sessionId: string): SdkMessage[] {
  const message = event.message;
  switch (message.type) {
    case 'assistant':
      return [
        {
          type: 'assistant',
          message: { type: 'message', ...message.message },
          parent_tool_use_id: null,
          ...(message.apiError ? { error: message.apiError } : {}),
          uuid: message.uuid,
          session_id: sessionId,
        },
      ];
    case 'user':
      return [
        {
          type: 'user',
          message: { role: 'user', content: message.message.content },
          parent_tool_use_id: null,
          ...(message.isMeta ? { isSynthetic: true } : {}),
          uuid: message.uuid,
          session_id: sessionId,
        },
      ];
    case 'compact_boundary':
      return [
        {
          type: 'system',
          subtype: 'compact_boundary',
          compact_metadata: { trigger: message.trigger === 'manual' ? 'manual' : 'auto', pre_tokens: message.preTokens },
          uuid: message.uuid,
          session_id: sessionId,
        },
      ];
    case 'result':
      return [message as unknown as SdkMessage];
    default:
      return [];
  }
}

/** What `ask` prints for its result in `text` and `json` formats (stream-json prints it as a line of the stream). */
export function formatFinalOutput(format: Exclude<OutputFormat, 'stream-json'>, result: ResultMessage): string {
  return format === 'json' ? JSON.stringify(result) : result.result;
}

import type { RecordedRequest } from '../../testing/scripted-model-server';

/** The tool_result blocks the model got across `requests`, by tool_use id (content as text; the last one wins). */
export function resultsById(requests: readonly RecordedRequest[]): Map<string, { content: string; is_error?: boolean }> {
  const results = new Map<string, { content: string; is_error?: boolean }>();
  for (const request of requests) {
    for (const message of request.body.messages as Array<{ content: unknown }>) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
        if (block.type !== 'tool_result' || !block.tool_use_id) continue;
        const content = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
        results.set(block.tool_use_id, { content, is_error: block.is_error });
      }
    }
  }
  return results;
}

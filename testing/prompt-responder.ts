/**
 * A scripted model that answers by what the last user message says (issue 21 tests): a prompt
 * containing a key gets that key's tool calls; tool results get `ok: <results>` (so a test reads
 * what the tool answered in the result message); anything else `OK`. Wakeups, cron fires and
 * notifications arrive as prompts at times the test does not fix, so turns cannot be scripted in order.
 */
import type { RecordedRequest, Responder, ScriptedTurn } from './scripted-model-server';

export type ToolCall = { name: string; input: Record<string, unknown> };

/** The last user message: its text blocks and its tool results. */
export function lastUserMessage(request: RecordedRequest): { text: string; toolResults: Array<{ content: string; is_error?: boolean }> } {
  const messages = request.body?.messages ?? [];
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return { text: '', toolResults: [] };
  if (typeof last.content === 'string') return { text: last.content, toolResults: [] };
  const blocks: any[] = last.content;
  const textOf = (content: unknown) =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((block: any) => (block.type === 'text' ? block.text : '')).join('') : '';
  return {
    text: blocks
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('\n'),
    toolResults: blocks.filter((block) => block.type === 'tool_result').map((block) => ({ content: textOf(block.content), is_error: block.is_error })),
  };
}

/** Keys are matched in order against the last user message's text; `answers` say what to reply to a plain prompt. */
export function promptResponder(plan: Array<[key: string, calls: ToolCall[] | (() => ToolCall[]) | string]>): Responder {
  return (request) => {
    const { text, toolResults } = lastUserMessage(request);
    if (toolResults.length > 0)
      return {
        content: [{ type: 'text', text: `ok: ${toolResults.map((result) => `${result.is_error ? '[error] ' : ''}${result.content}`).join('\n---\n')}` }],
      };
    for (const [key, calls] of plan) {
      if (!text.includes(key)) continue;
      if (typeof calls === 'string') return { content: [{ type: 'text', text: calls }] };
      const list = typeof calls === 'function' ? calls() : calls;
      const turn: ScriptedTurn = { content: list.map((call) => ({ type: 'tool_use' as const, name: call.name, input: call.input })) };
      return turn;
    }
    return { content: [{ type: 'text', text: 'OK' }] };
  };
}

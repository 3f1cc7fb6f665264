/**
 * Claude Code's small fast model (its Haiku-class model), for the short reads that are not the
 * conversation: WebFetch reading a page with its prompt, prompt hooks deciding on an event. One
 * plain Messages API call on the worker's own client — no tools, no streaming. The model is the
 * caller's, else `ANTHROPIC_DEFAULT_HAIKU_MODEL` when set (Claude Code's variable), else `haiku`.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { requestModelId } from '../common/models';

/** The small fast model's id for a request: `model` if given, else the environment's choice, else `haiku`. */
export function smallModelId(model?: string, env: NodeJS.ProcessEnv = process.env): string {
  return requestModelId(model?.trim() || env.ANTHROPIC_DEFAULT_HAIKU_MODEL?.trim() || 'haiku');
}

/** One question to the small fast model; its text answer (the text blocks joined). */
export async function askSmallModel(
  anthropic: Anthropic,
  request: { system: string; prompt: string; maxTokens: number; signal: AbortSignal; model?: string; maxRetries?: number },
): Promise<string> {
  const message = await anthropic.messages.create(
    {
      model: smallModelId(request.model),
      max_tokens: request.maxTokens,
      system: request.system,
      messages: [{ role: 'user', content: request.prompt }],
    },
    { signal: request.signal, ...(request.maxRetries !== undefined && { maxRetries: request.maxRetries }) },
  );
  return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

/** Longest answer WebFetch's read of a page gives. */
const PAGE_READ_MAX_TOKENS = 4_096;

/** WebFetch's reader: the small fast model answers the call's prompt about the page. */
export function smallModelReader(anthropic: Anthropic) {
  return async (prompt: string, signal: AbortSignal): Promise<string> => {
    const answer = await askSmallModel(anthropic, {
      system: 'You read one web page for a coding agent and answer its question about that page, briefly and only from the page.',
      prompt,
      maxTokens: PAGE_READ_MAX_TOKENS,
      signal,
    });
    return answer.trim() || '(The model gave no answer about this page.)';
  };
}

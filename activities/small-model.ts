/**
 * The small fast model Claude Code reads web pages with (its Haiku-class model): one plain Messages
 * API call, no tools, no streaming, on the worker's own client. The model is
 * `ANTHROPIC_DEFAULT_HAIKU_MODEL` when set (Claude Code's variable), else the `haiku` alias.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { requestModelId } from '../common/models';

/** Longest answer the small model gives. */
const SMALL_MODEL_MAX_TOKENS = 4_096;

export function smallModelReader(anthropic: Anthropic, env: NodeJS.ProcessEnv = process.env) {
  const model = requestModelId(env.ANTHROPIC_DEFAULT_HAIKU_MODEL?.trim() || 'haiku');
  return async (prompt: string, signal: AbortSignal): Promise<string> => {
    const message = await anthropic.messages.create(
      {
        model,
        max_tokens: SMALL_MODEL_MAX_TOKENS,
        system: 'You read one web page for a coding agent and answer its question about that page, briefly and only from the page.',
        messages: [{ role: 'user', content: prompt }],
      },
      { signal },
    );
    const text = message.content
      .filter((block): block is Anthropic.TextBlock => block.type === 'text')
      .map((block) => block.text)
      .join('\n')
      .trim();
    return text || '(The model gave no answer about this page.)';
  };
}

/**
 * The scripted model of the read-files loop, stateless so it can run in the model server's own
 * process (bench/model-process.ts): the prompt says which files ("Read t0.txt to t49.txt, one file
 * per turn."), the request's tool results how many are done; it asks to `Read` the next one, and
 * after the last answers with text. A retried call gets the same answer.
 */
import type { Responder } from '../testing/scripted-model-server';

/** The prompt of a loop over `<prefix><i><suffix>` for i < n. */
export function readFilesPrompt(fileName: (index: number) => string, n: number): string {
  return `Read ${fileName(0)} to ${fileName(n - 1)}, one file per turn.`;
}

const PROMPT = /Read (\D*)0(\S*) to \1(\d+)\2, one file per turn\./;

export const readFilesResponder: Responder = (request) => {
  const messages: Array<{ content: unknown }> = request.body.messages ?? [];
  const match = PROMPT.exec(JSON.stringify(messages[0]?.content ?? ''));
  if (!match) return undefined;
  const [, prefix, suffix, last] = match;
  const done = countToolResults(messages);
  if (done <= Number(last)) return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: `${prefix}${done}${suffix}` } }] };
  return { content: [{ type: 'text', text: `Read all ${done} files.` }] };
};

/** Number of tool_result blocks in a Messages API request: how many tool calls were answered. */
export function countToolResults(messages: Array<{ content: unknown }>): number {
  let count = 0;
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) if ((block as { type?: string }).type === 'tool_result') count++;
  }
  return count;
}

/**
 * How large a prompt may be. A prompt travels in Temporal payloads — the workflow's input or a
 * `userInput` signal, and later the continue-as-new input with the transcript — which the server
 * caps (2 MB each by default); a larger one failed as "Failed to start Workflow" with no word on
 * why. Checked by the client before anything is sent, so nothing is lost.
 */

/**
 * The largest prompt, in UTF-8 bytes: the server's default payload limit (2 MiB, 2,097,152
 * bytes) less room for the conversation's settings beside it in the workflow input.
 */
export const MAX_PROMPT_BYTES = 2_000_000;

/** Thrown for a prompt over MAX_PROMPT_BYTES. */
export class PromptTooLargeError extends Error {
  override readonly name = 'PromptTooLargeError';
  constructor(
    readonly bytes: number,
    readonly limit: number = MAX_PROMPT_BYTES,
  ) {
    super(
      `The prompt is ${formatBytes(bytes)} (${bytes.toLocaleString('en-US')} bytes); the limit is ${formatBytes(limit)} ` +
        `(${limit.toLocaleString('en-US')} bytes), because a prompt travels in a Temporal payload (2 MiB at most by default). ` +
        'Put the material in a file in the workspace and ask the agent to read it.',
    );
  }
}

/** Throws PromptTooLargeError for a prompt over the limit. */
export function checkPromptSize(prompt: string | undefined, limit: number = MAX_PROMPT_BYTES): void {
  if (prompt === undefined) return;
  // Cheap bound first: a UTF-8 character is at most 3 bytes per UTF-16 unit.
  if (prompt.length * 3 <= limit) return;
  const bytes = new TextEncoder().encode(prompt).length;
  if (bytes > limit) throw new PromptTooLargeError(bytes, limit);
}

function formatBytes(bytes: number): string {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes >= 1_000) return `${(bytes / 1_000).toFixed(1)} kB`;
  return `${bytes} bytes`;
}

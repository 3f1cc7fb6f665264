/**
 * Runs the regular expressions of Grep and Glob on a worker thread with a time limit. JavaScript
 * regexes backtrack: `^(a+)+$` on 30 `a`s and a `!` ran ~42 s on the worker's event loop, which
 * stalled every other conversation, lapsed heartbeats and timed out workflow tasks (issue 12,
 * defect 2). On a thread the event loop stays free, and a search past its limit is stopped by
 * terminating the thread (V8 interrupts a running regex). The thread's code is plain JavaScript
 * passed as a string, so it runs the same under tsx, vitest and compiled output.
 */
import { Worker } from 'node:worker_threads';

/** Longest one search request (one file for Grep, all paths for Glob) may run. */
export const SEARCH_TIME_LIMIT_MS = 5_000;

/** Characters of a matching line sent back; callers truncate shown lines far below this. */
const MAX_RETURNED_LINE_CHARS = 10_000;

const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (request) => {
  const regex = new RegExp(request.source, request.flags);
  if (request.type === 'paths') {
    const indices = [];
    for (let index = 0; index < request.subjects.length; index += 1) {
      if (regex.test(request.subjects[index])) indices.push(index);
    }
    parentPort.postMessage({ indices });
    return;
  }
  const bytes = request.bytes;
  const lines = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split(/\\r?\\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const matches = [];
  for (let index = 0; index < lines.length && matches.length < request.stopAfter; index += 1) {
    const line = lines[index];
    if (regex.test(line)) {
      matches.push({
        lineNumber: index + 1,
        text: request.collectLines ? line.slice(0, ${MAX_RETURNED_LINE_CHARS}) : '',
        length: line.length,
      });
    }
  }
  parentPort.postMessage({ matches });
});
`;

/** A search that ran past its time limit (almost always catastrophic backtracking). */
export class SearchTimeoutError extends Error {
  override readonly name = 'SearchTimeoutError';
  constructor(readonly timeLimitMs: number) {
    super(`search stopped after ${timeLimitMs} ms`);
  }
}

export interface LineMatch {
  lineNumber: number;
  /** The line, cut at MAX_RETURNED_LINE_CHARS. */
  text: string;
  /** The line's full length in characters. */
  length: number;
}

/** One thread per tool call (a shared one would let one slow search hold up the others). */
export class SearchThread {
  private worker: Worker | undefined;

  constructor(
    private readonly signal: AbortSignal,
    private readonly timeLimitMs = SEARCH_TIME_LIMIT_MS,
  ) {}

  /** Indices of `subjects` that `regex` matches. */
  async matchPaths(regex: RegExp, subjects: readonly string[]): Promise<number[]> {
    if (subjects.length === 0) return [];
    const reply = await this.request({ type: 'paths', source: regex.source, flags: regex.flags, subjects });
    return reply.indices as number[];
  }

  /** Matching lines of `bytes` (UTF-8 text), at most `stopAfter`. */
  async matchLines(regex: RegExp, bytes: Uint8Array, collectLines: boolean, stopAfter: number): Promise<LineMatch[]> {
    const reply = await this.request({ type: 'lines', source: regex.source, flags: regex.flags, bytes, collectLines, stopAfter });
    return reply.matches as LineMatch[];
  }

  /** Stops the thread; call when the tool call is done. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private startThread(): Worker {
    // A thread that runs out of memory fails its search, not the worker process.
    const worker = new Worker(THREAD_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    worker.on('error', () => {}); // reported to the pending request's own listener; never uncaught
    worker.unref();
    return worker;
  }

  private request(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.signal.throwIfAborted();
    const worker = (this.worker ??= this.startThread());
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const stop = (error: unknown) => {
        cleanup();
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        reject(error);
      };
      const onMessage = (reply: Record<string, unknown>) => {
        cleanup();
        resolve(reply);
      };
      const onError = (error: Error) => stop(error);
      const onExit = () => stop(new Error('search thread exited unexpectedly'));
      const onAbort = () => stop(this.signal.reason);
      const timer = setTimeout(() => stop(new SearchTimeoutError(this.timeLimitMs)), this.timeLimitMs);
      this.signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(message);
    });
  }
}

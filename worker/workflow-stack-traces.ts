/**
 * Workflow threads without the SDK's stack-trace promise hook. The SDK (1.23) installs a V8
 * promise hook in each workflow thread that captures and source-maps a stack trace for every
 * promise a workflow creates, only to answer the `__stack_trace` query (the Temporal UI's "Stack
 * Trace" tab); with a hook installed every promise of the thread also takes V8's slow path. There
 * is no option to turn it off, so the SDK's workflow threads start with a preload
 * (`no-workflow-stack-traces.cjs`) that refuses the hook; the SDK then runs them without stack
 * traces. Figures: bench/results/iteration-overhead.md. Opt-in: `workflowStackTraces: false` in
 * createWorker or DURABLE_AGENT_WORKFLOW_STACK_TRACES=0 (stack traces stay on by default: the UI's
 * Stack Trace tab is how a stuck conversation is diagnosed, and this swaps an SDK internal).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';

const PRELOAD = path.join(__dirname, 'no-workflow-stack-traces.cjs');
/** The SDK's workflow thread script (its threaded VM starts one per workflow thread). */
const WORKFLOW_THREAD = /[\\/]@temporalio[\\/]worker[\\/]lib[\\/]workflow[\\/]workflow-worker-thread/;
let installed = false;

/** Makes workflow threads started from now on run without the hook. Idempotent; process-wide. */
export function disableWorkflowStackTraces(): void {
  if (installed) return;
  installed = true;
  // The module object itself, not an import's namespace copy: the SDK reads `.Worker` from it
  // each time it starts a thread.
  const workerThreads = createRequire(__filename)('node:worker_threads') as typeof WorkerThreads;
  const NodeWorker = workerThreads.Worker;
  class WorkflowThread extends NodeWorker {
    constructor(filename: string | URL, options: WorkerThreads.WorkerOptions = {}) {
      const preload = WORKFLOW_THREAD.test(String(filename));
      super(filename, preload ? { ...options, execArgv: [...(options.execArgv ?? process.execArgv), '--require', PRELOAD] } : options);
    }
  }
  (workerThreads as { Worker: typeof NodeWorker }).Worker = WorkflowThread;
}

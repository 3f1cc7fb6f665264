/**
 * Preload of the SDK's workflow threads (see workflow-stack-traces.ts): refuses the SDK's
 * stack-trace promise hook. The SDK catches the refusal and runs the thread without stack trace
 * collection (the `__stack_trace` query answers "Workflow stack traces are not enabled on this
 * worker"); its console warning, which would blame the Node version, is left out.
 */
const { isMainThread } = require('node:worker_threads');

if (!isMainThread) {
  const { promiseHooks } = require('node:v8');
  const createHook = promiseHooks.createHook;
  let refused = false;
  promiseHooks.createHook = function createHookUnlessTemporalWorker(hooks) {
    if (/[\\/]@temporalio[\\/]worker[\\/]/.test(new Error().stack ?? '')) {
      refused = true;
      throw new Error('workflow stack traces are disabled (worker/no-workflow-stack-traces.cjs)');
    }
    return createHook.call(this, hooks);
  };
  const warn = console.warn;
  console.warn = function warnUnlessRefusedHook(...args) {
    if (refused && typeof args[0] === 'string' && args[0].startsWith('v8.promiseHooks.createHook is not available')) return;
    return warn.apply(this, args);
  };
}

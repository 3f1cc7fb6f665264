/**
 * A worker process for bench/load.ts: the project's worker (createWorker, real activities, the
 * real SDK against the scripted model server) with a pre-built workflow bundle, so starting one
 * costs no bundling, and the tuning from the environment (worker/tuning.ts), as `worker/main.ts`
 * applies it. Prints `ready` once polling. Killed with SIGKILL by the benchmark.
 *
 * Environment: TEMPORAL_ADDRESS, DURABLE_AGENT_TASK_QUEUE, DURABLE_AGENT_STATE_DIR,
 * ANTHROPIC_BASE_URL, LOAD_WORKFLOW_BUNDLE (file), LOAD_WORKER_IDENTITY, DURABLE_AGENT_* tuning.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createWorker } from '../worker/worker';
import { workerTuningFromEnvironment } from '../worker/tuning';

async function main(): Promise<void> {
  const env = process.env;
  const address = env.TEMPORAL_ADDRESS!;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const client = new Client({ connection: await Connection.connect({ address }), namespace: 'default' });
  const connection = await NativeConnection.connect({ address });
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue: env.DURABLE_AGENT_TASK_QUEUE!,
    workflowBundle: { codePath: env.LOAD_WORKFLOW_BUNDLE! },
    activities: createActivities({
      anthropic: new Anthropic({ apiKey: 'bench', baseURL: env.ANTHROPIC_BASE_URL, maxRetries: 0 }),
      stateDir: env.DURABLE_AGENT_STATE_DIR!,
      temporalClient: client,
    }),
    overrides: { ...workerTuningFromEnvironment(env), identity: env.LOAD_WORKER_IDENTITY },
  });
  console.log('ready');
  await worker.run();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { defineConfig } from 'vitest/config';

/**
 * Two projects:
 *  - `unit`        test/unit/**: no Temporal server needed; files run in parallel.
 *  - `integration` every other test/**\/*.test.ts: gets ONE shared ephemeral dev server from test/global-setup.ts
 *                  (`inject('temporalAddress')`). vitest only runs a project's globalSetup when that project has
 *                  files to run, so `npm run test:unit` does not start a server.
 * Both projects first compile dist/ when it is missing or older than the sources (test/build-setup.ts): tests that run
 * bin/durable-agent.js run the compiled CLI, as a person does.
 *
 * Parallelism, for a 2-core machine where each integration file starts real Temporal Workers:
 *  - pool 'forks': @temporalio/worker loads a native (Rust) addon and bundles workflow code with webpack; child
 *    processes are the setup Temporal supports (worker_threads are not), and a crash stays in one fork.
 *  - every file, unit or integration, runs in its own fork, three at a time on two cores (maxWorkers 3), longest first
 *    (vitest's sequencer, from the previous run's durations; on a fresh clone, largest first). Most of an integration
 *    file's time is waiting — for a worker process to start, a Schedule to fire by the clock, a sandboxed `sleep`, a
 *    server to restart — so a third fork fills the idle CPU: measured on this 2-core machine, the whole suite took
 *    665 s with two forks and 531 s with three (all passing; the CPU then 70–95% busy). The workflow bundle is built
 *    once in global setup, so a file's Workers start without webpack's CPU burst.
 *  - several integration files at once are safe because no test reads state of the shared server beyond its own: each
 *    test has its own task queue (test/helpers/harness.ts), its own Worker Deployment (`harness.deploymentName`;
 *    versioned-worker tests name their own), and lists or counts only its own conversations (by workspace, task
 *    queue, workflow id or parent id); `upgrade --all` runs on worker-versioning's own PostgreSQL stack. A test that
 *    needs a server-wide view starts a server of its own (restartable-server.ts, postgres-suite.ts).
 *  - three Workers at once share 2 cores with the dev server, so workflow-task and activity timings vary with CPU
 *    contention: tests wait for conditions (`eventually`), not for fixed delays, and a timeout that a test depends on
 *    (heartbeats, sticky queues) leaves room for a busy machine.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 3,
    minWorkers: 1,
    testTimeout: 120_000,
    // The first run on a machine may `go install` the Temporal CLI inside globalSetup (several minutes).
    hookTimeout: 600_000,
    teardownTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          globalSetup: ['test/build-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', '**/node_modules/**'],
          globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
        },
      },
    ],
  },
});

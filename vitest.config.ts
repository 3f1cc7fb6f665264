import { defineConfig } from 'vitest/config';

/**
 * Two projects:
 *  - `unit`        test/unit/**: no Temporal server needed; files run in parallel.
 *  - `integration` every other test/**\/*.test.ts: gets ONE shared ephemeral dev server from test/global-setup.ts
 *                  (`inject('temporalAddress')`). vitest only runs a project's globalSetup when that project has
 *                  files to run, so `npm run test:unit` neither builds the CLI nor starts a server.
 *
 * Parallelism, for a 2-core machine where each integration file starts real Temporal Workers:
 *  - pool 'forks': @temporalio/worker loads a native (Rust) addon and bundles workflow code with webpack; child
 *    processes are the setup Temporal supports (worker_threads are not), and a crash stays in one fork.
 *  - integration files run one at a time (`singleFork`: in sequence, in one fork, each file still re-evaluating its
 *    own modules). A Worker's workflow bundling alone can saturate a core and the dev server needs the other one;
 *    two Workers at once on 2 cores make workflow-task timings (and so test outcomes) depend on CPU contention.
 *  - unit files use the remaining parallelism (maxWorkers 2: one fork per core).
 */
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
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
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', '**/node_modules/**'],
          globalSetup: ['test/global-setup.ts'],
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});

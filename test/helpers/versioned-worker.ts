/**
 * `durable-agent worker` (runWorker) with a different workflow bundle from the same source: the
 * text of TEST_BUNDLE_BANNER is prepended to the bundle, so its content hash — its build id —
 * differs (version N+1 without a second commit). Kept versions are checked every second.
 */
import { runWorker } from '../../worker/main';

runWorker(process.env, { bundleBanner: process.env.TEST_BUNDLE_BANNER || undefined, retainedVersionsIntervalMs: 1_000 }).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

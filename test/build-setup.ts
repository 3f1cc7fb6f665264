/**
 * vitest globalSetup of both projects (vitest.config.ts): tests that run the installed binary (bin/durable-agent.js,
 * test/helpers/bin.ts, tmux chats) run the compiled CLI in dist/, so dist/ is compiled here, once, when it is missing
 * or older than the sources (bin/build-check.js: the same check the binary makes; up to date, it costs a millisecond).
 * Compiled here rather than by the first binary a test starts: several test files start one at once.
 */
const { staleness, rebuild } = require('../bin/build-check.js') as { staleness(): string | undefined; rebuild(): string | undefined };

export default function setup(): void {
  const why = staleness();
  if (why === undefined) return;
  const started = Date.now();
  process.stderr.write(`[build-setup] ${why}: compiling dist/ (npm run build)\n`);
  const failure = rebuild();
  if (failure !== undefined) throw new Error(`compiling dist/ failed:\n${failure}`);
  process.stderr.write(`[build-setup] dist/ compiled in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

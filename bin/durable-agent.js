#!/usr/bin/env node
// Runs the compiled CLI, dist/client/cli.js: JavaScript built by scripts/build.ts at `npm install` / `npm ci`
// (the `prepare` script) or `npm run build`. Loaded in this process, so signals (Ctrl-C, SIGTERM to a worker) reach
// it directly.
//
// A checkout whose sources changed since dist/ was built (a `git pull` without `npm install`, an edit) is compiled
// again first, with one line on stderr saying so (bin/build-check.js; the check costs about a millisecond). A
// failed compile is an error, never an old binary. DURABLE_AGENT_SKIP_BUILD_CHECK=1 runs dist/ as it is.
'use strict';
if (process.env.DURABLE_AGENT_SKIP_BUILD_CHECK !== '1') {
  const { staleness, rebuild } = require('./build-check.js');
  const why = staleness();
  if (why !== undefined) {
    const started = Date.now();
    process.stderr.write(`durable-agent: ${why}: compiling the sources (npm run build)…`);
    const failure = rebuild();
    if (failure !== undefined) {
      process.stderr.write(`\n${failure}\ndurable-agent: compiling failed; fix the error above and run the command again (or \`npm run build\`).\n`);
      process.exit(1);
    }
    process.stderr.write(` done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
}
// A worker's stack traces (in activity failures, in its log) name the .ts lines, as under tsx: dist/ has a .js.map
// beside each file. Only the long-running worker reads them; a command that starts and exits does not pay for it.
if (process.argv[2] === 'worker') process.setSourceMapsEnabled(true);
const { main, enterInvocationDirectory } = require('../dist/client/cli.js');
enterInvocationDirectory();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);

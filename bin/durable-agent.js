#!/usr/bin/env node
// Loads the TypeScript CLI in this process through tsx (a runtime dependency): no build step,
// and signals (Ctrl-C, SIGTERM to a worker) reach the CLI directly.
require('tsx/cjs/api').register();
const { main } = require('../client/cli.ts');
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);

#!/usr/bin/env node
// Loads the TypeScript CLI in this process through tsx (a runtime dependency): no build step,
// and signals (Ctrl-C, SIGTERM to a worker) reach the CLI directly. Both of tsx's hooks are
// registered: the CLI's dynamic `import()`s (chat, worker, server, codec-server) go through
// Node's ESM loader, which the CommonJS hook alone does not reach (issue 19, item 1). The ESM
// API is imported, not required: its CommonJS build cannot find its own module.
require('tsx/cjs/api').register();
import('tsx/esm/api')
  .then(({ register }) => {
    register();
    const { main, enterInvocationDirectory } = require('../client/cli.ts');
    enterInvocationDirectory();
    return main(process.argv.slice(2));
  })
  .then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );

#!/usr/bin/env node
// Runs the TypeScript CLI through tsx (a runtime dependency), so the package needs no build step.
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const cli = path.join(__dirname, '..', 'client', 'cli.ts');
const tsx = require.resolve('tsx/cli');
const result = spawnSync(process.execPath, [tsx, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status === null ? 1 : result.status);

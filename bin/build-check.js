// Whether dist/ (the compiled CLI and worker, scripts/build.ts) is older than the sources, and the rebuild:
// used by bin/durable-agent.js at every call and by the tests' global setup (test/build-setup.ts).
// dist/.build.json lists every source file and source directory with its mtime at build time; an edit changes a
// file's mtime, an added or removed file its directory's. Checking is a few hundred stat calls, no reads.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const MANIFEST = path.join(ROOT, 'dist', '.build.json');
const BUILD_SCRIPT = path.join(ROOT, 'scripts', 'build.ts');

/** Why dist/ must be rebuilt, or undefined when it is up to date (or there are no sources to build it from). */
function staleness() {
  if (!fs.existsSync(BUILD_SCRIPT)) return undefined;
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
  } catch {
    return fs.existsSync(path.join(ROOT, 'dist')) ? 'dist/ is incomplete' : 'dist/ is not built yet';
  }
  for (const [relative, mtimeMs] of Object.entries(manifest.entries ?? {})) {
    const stat = fs.statSync(path.join(ROOT, relative), { throwIfNoEntry: false });
    if (stat?.mtimeMs !== mtimeMs) return `${relative} ${stat ? 'changed' : 'is gone'} since dist/ was built`;
  }
  return undefined;
}

/**
 * Rebuilds dist/ in a child process (tsx scripts/build.ts --quiet). Returns undefined on success, else what went
 * wrong: the build's own output (esbuild's message names the file and line), or how it failed to run.
 */
function rebuild() {
  const { spawnSync } = require('node:child_process');
  const run = spawnSync(process.execPath, ['--import', 'tsx', BUILD_SCRIPT, '--quiet'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (run.status === 0) return undefined;
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim();
  return output || (run.error ? run.error.message : `exit ${run.status ?? run.signal}`);
}

module.exports = { staleness, rebuild, ROOT, MANIFEST };

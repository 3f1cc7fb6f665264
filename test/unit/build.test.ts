/**
 * The compiled CLI and worker (scripts/build.ts → dist/, issue 32): what the binary checks before it runs dist/
 * (bin/build-check.js), how dynamic imports compile, and that the compiled code finds the checkout's files as the
 * sources do under tsx. dist/ itself was compiled by the tests' global setup (test/build-setup.ts).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DIST, ROOT, lazyRequireRelativeImports, listSources } from '../../scripts/build';

const requireHere = createRequire(__filename);
let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** A checkout of its own: bin/build-check.js, a build script, one source file and a manifest written for it. */
function checkout() {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-build-check-'));
  mkdirSync(path.join(scratch, 'bin'));
  mkdirSync(path.join(scratch, 'scripts'));
  mkdirSync(path.join(scratch, 'common'));
  copyFileSync(path.join(ROOT, 'bin', 'build-check.js'), path.join(scratch, 'bin', 'build-check.js'));
  writeFileSync(path.join(scratch, 'scripts', 'build.ts'), '');
  writeFileSync(path.join(scratch, 'common', 'a.ts'), 'export const a = 1;\n');
  const root = scratch;
  const writeManifest = () => {
    mkdirSync(path.join(root, 'dist'), { recursive: true });
    const entries: Record<string, number> = {};
    for (const relative of ['common', 'common/a.ts']) entries[relative] = requireHere('node:fs').statSync(path.join(root, relative)).mtimeMs;
    writeFileSync(path.join(root, 'dist', '.build.json'), JSON.stringify({ entries, builtAt: new Date().toISOString() }));
  };
  const staleness = () => (requireHere(path.join(root, 'bin', 'build-check.js')) as { staleness(): string | undefined }).staleness();
  return { root, writeManifest, staleness };
}

describe('bin/build-check.js', () => {
  it('says dist/ is stale when it is missing, when a source changed, was added or was removed, and not otherwise', () => {
    const { root, writeManifest, staleness } = checkout();
    expect(staleness()).toBe('dist/ is not built yet');
    mkdirSync(path.join(root, 'dist'));
    expect(staleness()).toBe('dist/ is incomplete'); // a build that stopped before its manifest
    writeManifest();
    expect(staleness()).toBeUndefined();
    // An edit (or a checkout of an older commit: the mtime moves either way).
    utimesSync(path.join(root, 'common', 'a.ts'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    expect(staleness()).toBe('common/a.ts changed since dist/ was built');
    writeManifest();
    writeFileSync(path.join(root, 'common', 'b.ts'), 'export const b = 2;\n');
    utimesSync(path.join(root, 'common'), new Date(2021, 0, 1), new Date(2021, 0, 1)); // as adding a file does, without waiting for the clock
    expect(staleness()).toBe('common changed since dist/ was built');
    writeManifest();
    rmSync(path.join(root, 'common', 'a.ts'));
    expect(staleness()).toMatch(/^common(\/a\.ts is gone| changed) since dist\/ was built$/);
  });

  it('has nothing to say without the sources (a copy of dist/ alone runs as it is)', () => {
    const { root, staleness } = checkout();
    rmSync(path.join(root, 'scripts', 'build.ts'));
    expect(staleness()).toBeUndefined();
  });

  it('finds this checkout up to date after the global setup compiled it', () => {
    expect((requireHere('../../bin/build-check.js') as { staleness(): string | undefined }).staleness()).toBeUndefined();
  });
});

describe('scripts/build.ts', () => {
  it('compiles our own dynamic imports to lazy requires and keeps packages as real import()', () => {
    const code = 'const a = await import("./commands/chat"); const b = await import("../../worker/main"); const c = await import("ink");';
    expect(lazyRequireRelativeImports(code)).toBe(
      'const a = await Promise.resolve().then(() => require("./commands/chat")); ' +
        'const b = await Promise.resolve().then(() => require("../../worker/main")); const c = await import("ink");',
    );
  });

  it('compiles every product source file, and no test', () => {
    const { files } = listSources();
    expect(files).toContain(path.join('client', 'cli.ts'));
    expect(files).toContain(path.join('worker', 'main.ts'));
    expect(files.filter((file) => /\.test\.ts$|\.d\.ts$/.test(file))).toEqual([]);
    for (const file of files) expect(readFileSync(path.join(DIST, file.replace(/\.tsx?$/, '.js')), 'utf8').length, file).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(path.join(DIST, 'package.json'), 'utf8')).version).toBe(requireHere('../../package.json').version);
  });

  it("gives compiled code its source file's directory as __dirname: the checkout's paths stay what they are under tsx", () => {
    // A separate Node process without tsx: what the binary loads.
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        `const d = require(${JSON.stringify(path.join(DIST, 'infra', 'dev-server.js'))});
         const w = require(${JSON.stringify(path.join(DIST, 'worker', 'worker.js'))});
         const e = require(${JSON.stringify(path.join(DIST, 'infra', 'encryption-codec.js'))});
         console.log(JSON.stringify([d.REPO_ROOT, w.WORKFLOWS_PATH, e.ENCRYPTED_FAILURE_CONVERTER_PATH]));`,
      ],
      { encoding: 'utf8', cwd: os.tmpdir() },
    );
    expect(probe.stderr).toBe('');
    expect(JSON.parse(probe.stdout)).toEqual([ROOT, path.join(ROOT, 'workflows'), path.join(ROOT, 'infra', 'encrypted-failure-converter.js')]);
  });
});

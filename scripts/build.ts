/**
 * `npm run build` (also run by `prepare`, so `npm install` / `npm ci` build it): compiles the product's TypeScript to
 * CommonJS in dist/ — every .ts/.tsx file of common/ workflows/ activities/ worker/ client/ infra/ testing/ (tests and
 * .d.ts files left out), one output file per source file (esbuild's transform, the same one tsx runs at each call
 * without a build), platform node, target node20 — plus package.json, which the CLI imports for its version.
 *
 * - Dynamic imports: `import('ink')` (a package) stays a real `import()` (ESM-only packages such as Ink cannot be
 *   required); `import('./commands/chat')` (our own files, CommonJS in dist/) becomes a lazy `require()`, which needs
 *   no file extension and no ESM loader. Either way the module loads only when the line runs.
 * - `__dirname` in a compiled file is its SOURCE file's directory: paths the code derives from it (the repository
 *   root, `.durable-agent/`, the workflows folder the SDK's webpack bundles, worker/*.cjs, infra/*.js and
 *   infra/temporal/) mean what they mean under tsx. dist/ is the compiled form of this checkout, not a package of
 *   its own; the workflow bundle is still built by webpack from the workflows' .ts sources, so a build id does not
 *   depend on whether the worker runs from dist/ or from tsx.
 * - dist/.build.json lists every source file and source directory with its mtime: bin/durable-agent.js compares them
 *   (a few hundred stat calls, no reads) and rebuilds when anything was edited, added or removed since — a
 *   `git pull` without `npm install` never runs an old binary.
 * - Source maps: one .js.map beside each file (stack traces name the .ts line under `node --enable-source-maps`).
 *
 * Usage: `npm run build` | `npx tsx scripts/build.ts [--quiet]`. Exit 1 on a syntax error (esbuild's message).
 */
import { transform } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');
export const DIST = path.join(ROOT, 'dist');
/** The product's source folders (everything the bin and the worker load). */
export const SOURCE_DIRECTORIES = ['common', 'workflows', 'activities', 'worker', 'client', 'infra', 'testing'];
/** Files outside those folders the compiled code reads: copied as they are. */
const COPIED = ['package.json'];
export const MANIFEST = path.join(DIST, '.build.json');

/** What dist/.build.json holds: the sources' mtimes when they were compiled (bin/durable-agent.js checks them). */
export interface BuildManifest {
  /** Relative path → mtimeMs, for every compiled or copied file and every source directory (an added file changes its directory's mtime). */
  entries: Record<string, number>;
  builtAt: string;
}

const isSource = (name: string) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !/\.test\.tsx?$/.test(name);

/** Source files and directories under the source folders (relative paths, sorted). */
export function listSources(root = ROOT): { files: string[]; directories: string[] } {
  const files: string[] = [];
  const directories: string[] = [];
  const walk = (relative: string) => {
    directories.push(relative);
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(child);
      } else if (entry.isFile() && isSource(entry.name)) files.push(child);
    }
  };
  for (const directory of SOURCE_DIRECTORIES) walk(directory);
  return { files: files.sort(), directories: directories.sort() };
}

/** `import("./x")` → a lazy require of our own compiled file; package specifiers keep their real `import()`. */
export function lazyRequireRelativeImports(code: string): string {
  return code.replace(/\bimport\(("\.\.?\/[^"]*")\)/g, 'Promise.resolve().then(() => require($1))');
}

function writeAtomically(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

async function compile(relative: string): Promise<string[]> {
  const source = path.join(ROOT, relative);
  const outFile = path.join(DIST, relative.replace(/\.tsx?$/, '.js'));
  const text = readFileSync(source, 'utf8');
  const sourceDirectory = path.relative(path.dirname(outFile), path.dirname(source));
  const usesDirname = /\b__dirname\b/.test(text);
  const result = await transform(text, {
    loader: relative.endsWith('.tsx') ? 'tsx' : 'ts',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    jsx: 'automatic',
    sourcemap: 'external',
    sourcesContent: false,
    // Errors name the file from the checkout's root; the source map, from the map's own directory (below).
    sourcefile: relative,
    ...(usesDirname
      ? {
          define: { __dirname: '__sourceDirname' },
          banner: `const __sourceDirname = require("node:path").join(__dirname, ${JSON.stringify(sourceDirectory)});`,
        }
      : {}),
  });
  const code = `${lazyRequireRelativeImports(result.code)}//# sourceMappingURL=${path.basename(outFile)}.map\n`;
  writeAtomically(outFile, code);
  const map = JSON.parse(result.map) as { sources: string[] };
  map.sources = [path.relative(path.dirname(outFile), source)];
  writeAtomically(`${outFile}.map`, JSON.stringify(map));
  return [outFile, `${outFile}.map`];
}

/** Removes files of dist/ this build did not write (a source that was deleted or renamed). */
function removeOthers(directory: string, keep: Set<string>): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      removeOthers(full, keep);
      if (readdirSync(full).length === 0) rmSync(full, { recursive: true, force: true });
    } else if (!keep.has(full) && !entry.name.endsWith('.tmp')) rmSync(full, { force: true });
  }
}

/** Compiles everything into dist/; returns how many files and how long it took. */
export async function build(): Promise<{ files: number; ms: number }> {
  const started = performance.now();
  const { files, directories } = listSources();
  // The mtimes are taken BEFORE the files are read: an edit during the build makes the next check rebuild.
  const entries: Record<string, number> = {};
  for (const relative of [...directories, ...files, ...COPIED]) entries[relative] = statSync(path.join(ROOT, relative)).mtimeMs;
  const written = new Set<string>([MANIFEST]);
  const errors: string[] = [];
  for (let i = 0; i < files.length; i += 32) {
    const results = await Promise.allSettled(files.slice(i, i + 32).map(compile));
    for (const [index, outcome] of results.entries()) {
      if (outcome.status === 'fulfilled') outcome.value.forEach((file) => written.add(file));
      else errors.push(`${files[i + index]}: ${outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason)}`);
    }
  }
  if (errors.length > 0) throw new Error(`durable-agent build failed:\n${errors.join('\n')}`);
  for (const relative of COPIED) {
    const target = path.join(DIST, relative);
    writeAtomically(target, readFileSync(path.join(ROOT, relative), 'utf8'));
    written.add(target);
  }
  removeOthers(DIST, written);
  // Written last: a build that stopped half-way leaves no manifest, so the next check rebuilds.
  const manifest: BuildManifest = { entries, builtAt: new Date().toISOString() };
  writeAtomically(MANIFEST, `${JSON.stringify(manifest)}\n`);
  return { files: files.length, ms: performance.now() - started };
}

if (require.main === module) {
  const quiet = process.argv.includes('--quiet');
  build().then(
    ({ files, ms }) => {
      if (!quiet) console.log(`durable-agent build: ${files} files compiled to dist/ in ${(ms / 1000).toFixed(1)} s`);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}

/**
 * Ink, loaded when chat starts (never by plain commands): it is ESM-only with top-level await, so
 * `require` cannot load it from this CommonJS code; a real dynamic `import()` can. The types are
 * the few parts chat uses (the package's own cannot be resolved under this project's
 * `moduleResolution: node`).
 */
import type React from 'react';

export interface InkKey {
  upArrow: boolean;
  downArrow: boolean;
  leftArrow: boolean;
  rightArrow: boolean;
  pageDown: boolean;
  pageUp: boolean;
  home: boolean;
  end: boolean;
  return: boolean;
  escape: boolean;
  ctrl: boolean;
  shift: boolean;
  tab: boolean;
  backspace: boolean;
  delete: boolean;
  meta: boolean;
}

type Props = Record<string, unknown> & { children?: React.ReactNode };

export interface InkModule {
  render(
    node: React.ReactElement,
    options?: { stdout?: NodeJS.WriteStream; stdin?: NodeJS.ReadStream; exitOnCtrlC?: boolean; patchConsole?: boolean },
  ): { unmount(): void; waitUntilExit(): Promise<unknown>; cleanup(): void };
  Box: React.FC<Props>;
  Text: React.FC<Props>;
  Static: <T>(props: { items: T[]; children: (item: T, index: number) => React.ReactNode }) => React.ReactElement;
  useInput(handler: (input: string, key: InkKey) => void, options?: { isActive?: boolean }): void;
  useStdout(): { stdout: NodeJS.WriteStream };
}

let loaded: InkModule | undefined;

export async function loadInk(): Promise<InkModule> {
  // A real import() (tsx and the esbuild build keep it): `require('ink')` fails with ERR_REQUIRE_ASYNC_MODULE.
  // The specifier is a variable: a bundler leaves it to Node at run time instead of inlining it.
  const specifier = 'ink';
  loaded ??= await withoutCiVariables(async () => (await import(specifier)) as InkModule);
  return loaded;
}

/**
 * Ink reads `CI` / `CONTINUOUS_INTEGRATION` once, when its module is evaluated (the `is-in-ci` package), and
 * in CI it draws nothing until it unmounts. Chat runs only on a terminal (piped stdin is refused before this),
 * so a `CI=true` in the user's shell (or a CI job driving chat in tmux) must not turn the REPL blank: the two
 * variables are hidden while Ink loads, then put back for everything else (tools, hooks, the worker).
 */
async function withoutCiVariables<T>(load: () => Promise<T>): Promise<T> {
  const saved = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  try {
    return await load();
  } finally {
    for (const [key, value] of Object.entries(saved)) if (value !== undefined) process.env[key] = value;
  }
}

/** The module loaded by `loadInk` (the app's components run only after it). */
export function ink(): InkModule {
  if (!loaded) throw new Error('Ink is not loaded (call loadInk first)');
  return loaded;
}

/**
 * How the person started this CLI, so the hints it prints run as printed (issue 32, item 3): the
 * README's flow runs it as `npm run cli -- …` from the clone, where `durable-agent` is not on PATH.
 * Pure apart from reading the environment; imports nothing, so the CLI's start-up can use it.
 */

/** The command a hint should name: `npm run cli --` under this package's `cli` script, else `durable-agent`. */
export function invocationName(env: NodeJS.ProcessEnv = process.env): string {
  // npm sets both for `npm run cli`; `npx durable-agent` (event "npx") and another package's scripts run our bin by name.
  return env.npm_lifecycle_event === 'cli' && env.npm_package_name === 'durable-agent' ? 'npm run cli --' : 'durable-agent';
}

/** `durable-agent <words>` as the person would type it here, e.g. `npm run cli -- chat conversation-e10872b5`. */
export function cliCommand(words: string, env: NodeJS.ProcessEnv = process.env): string {
  return `${invocationName(env)} ${words}`;
}

/** Driving the CLI in a real terminal (tmux), as a person would. Call `killTerminals()` after each test. */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './harness';

export const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });

/** The terminal's last 200 lines. */
export const screen = (session: string): string => tmux('capture-pane', '-p', '-t', session, '-S', '-200');

const sessions: string[] = [];

/** Starts `command` in a new 120×50 tmux session named `name` (unique per process). */
export function startTerminal(name: string, command: string): string {
  const session = `${name}-${process.pid}`;
  sessions.push(session);
  tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '50', command);
  return session;
}

/** Kills every session `startTerminal` started. */
export function killTerminals(): void {
  for (const session of sessions.splice(0)) {
    try {
      execFileSync('tmux', ['kill-session', '-t', session]);
    } catch {
      /* already gone */
    }
  }
}

/** Starts `durable-agent chat <args>` — the installed binary, as a person runs it (issue 19, item 1) — against a test's server and queue in a new detached tmux session. */
export function startChat(target: { address: string; taskQueue: string }, name: string, ...args: string[]): string {
  const command = [
    // As in CI (`.ci/run` exports CI=true): Ink draws nothing in CI unless chat hides the variable from it.
    // NO_COLOR (also exported there) is removed: the terminal here stands for a user's, whose colours tests check.
    'env -u NO_COLOR CI=true',
    `TEMPORAL_ADDRESS=${target.address}`,
    `DURABLE_AGENT_TASK_QUEUE=${target.taskQueue}`,
    process.execPath,
    path.join(REPO_ROOT, 'bin', 'durable-agent.js'),
    'chat',
    ...args,
    '; echo "[chat exited $?]"; sleep 600',
  ].join(' ');
  return startTerminal(name, command);
}

/** The chat shows its prompt line, ready for input (typing earlier would reach the terminal before the chat reads it). */
export const chatReady = (text: string): boolean => /Ctrl-D leaves[^\n]*\n> *$/.test(`${text.trimEnd()} `);

/** The chat shows `words` and, after its result's status line, the prompt again. */
export const chatAnswered = (text: string, words: string): boolean => text.includes(words) && /\$\d+\.\d{4}\]\s*\n> *$/.test(`${text.trimEnd()} `);

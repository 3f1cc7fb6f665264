/**
 * The installed binary (`bin/durable-agent.js`, the package's `bin`), run as a person runs it: a
 * separate Node process from another directory. Every command it names in its hints must load —
 * `chat`, `worker`, `server` and `codec-server` are imported lazily (issue 19, item 1).
 */
import { describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin';

describe('the durable-agent binary', () => {
  it('loads every command: chat, worker, server and codec-server reach their own checks', () => {
    const outcomes = {
      chat: runBin(['chat']),
      worker: runBin(['worker']),
      server: runBin(['server']),
      'codec-server': runBin(['codec-server']),
    };
    for (const [command, { err }] of Object.entries(outcomes)) {
      expect(err, command).not.toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
    }
    // chat's module loaded, and its first check (its input is not a terminal here) answered; the tmux tests load its Ink screen.
    expect(outcomes.chat.err).toMatch(/chat needs a terminal/);
    expect(outcomes.chat.code).toBe(2);
    expect(outcomes.worker.err).toMatch(/Cannot reach the Temporal server at 127\.0\.0\.1:1/);
    // server: either a server answers on 7233 already, or the (missing) Temporal CLI is named.
    expect(outcomes.server.out + outcomes.server.err).toMatch(/already answering|TEMPORAL_CLI_PATH is set to/);
    expect(outcomes['codec-server'].err).toMatch(/codec-server needs the encryption keys/);
  });
});

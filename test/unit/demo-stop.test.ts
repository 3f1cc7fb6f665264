/**
 * `npm start` leaves the dev server it started stopping on its own (scripts/demo.ts, issue 32 item 4):
 * the process writes while it shuts down, as the Temporal dev server does, and must get to its end —
 * not die of SIGPIPE on the pipes this process no longer reads. A nothing-listens port is told at once.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DevServer } from '../../infra/dev-server';
import { refused, stopInBackground } from '../../scripts/demo';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("npm start's dev server", () => {
  it('is left stopping cleanly: its shutdown output is drained, so it ends its own way', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'demo-stop-'));
    const marker = path.join(dir, 'ended');
    // Like the dev server: output while running, more output on SIGTERM, then a clean exit.
    const script = `trap 'sleep 0.3; for i in 1 2 3; do echo "stopping $i"; echo "stopping $i" >&2; done; echo clean > "$0"; exit 0' TERM; while :; do echo tick; sleep 0.05; done`;
    const child = spawn('sh', ['-c', script, marker], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout.on('data', () => undefined);
    child.stderr.on('data', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    stopInBackground({ process: child } as DevServer);
    expect(child.stdout.destroyed && child.stderr.destroyed).toBe(true);
    const deadline = Date.now() + 10_000;
    let ended = '';
    while (!ended && Date.now() < deadline) {
      ended = await readFile(marker, 'utf8').catch(() => '');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ended.trim()).toBe('clean');
  });

  it('tells a port nothing listens on at once, and one something listens on', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    expect(await refused(`127.0.0.1:${port}`)).toBe(false);
    await new Promise((resolve) => server.close(resolve));
    const started = Date.now();
    expect(await refused(`127.0.0.1:${port}`)).toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
    expect(await refused('not an address')).toBe(false);
  });
});

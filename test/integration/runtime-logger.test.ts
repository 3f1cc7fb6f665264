/**
 * The worker's log for people (worker/runtime-logger.ts, issue 32 item 4): the Rust core's warnings
 * come through the same logger, one line in our format, not printed raw by the core (ANSI colours,
 * its own layout). A real worker polls the test server through a TCP relay; closing the relay makes
 * the core retry its polls and warn.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { REPO_ROOT } from '../helpers/harness';

let child: ChildProcess | undefined;
let relay: net.Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  relay?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  child = relay = dir = undefined;
});

/** A TCP relay to `target`; `cut()` closes it and every connection through it. */
async function startRelay(target: string): Promise<{ address: string; cut: () => void }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  relay = net.createServer((inbound) => {
    const outbound = net.connect({ host, port });
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay!.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(relay.address() as net.AddressInfo).port}`,
    cut: () => {
      relay!.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

describe("the worker's log", () => {
  it("forwards the SDK core's warnings through the people logger: one line each, no colours", async () => {
    const through = await startRelay(inject('temporalAddress'));
    dir = await mkdtemp(path.join(os.tmpdir(), 'runtime-logger-'));
    const script = path.join(dir, 'worker.ts');
    await writeFile(
      script,
      [
        `import { NativeConnection, Worker } from ${JSON.stringify(require.resolve('@temporalio/worker'))};`,
        `import { installPeopleLogger } from ${JSON.stringify(path.join(REPO_ROOT, 'worker', 'runtime-logger'))};`,
        `(async () => {`,
        `  installPeopleLogger();`,
        `  const connection = await NativeConnection.connect({ address: ${JSON.stringify(through.address)} });`,
        `  const worker = await Worker.create({ connection, taskQueue: 'runtime-logger-${process.pid}', activities: { noop: async () => 1 } });`,
        `  console.log('polling');`,
        `  await worker.run();`,
        `})();`,
      ].join('\n'),
    );
    child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const until = async (test: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!test() && Date.now() < deadline && child!.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      return test();
    };
    expect(await until(() => stdout.includes('polling'), 60_000), stdout + stderr).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    through.cut();
    // Raw, the core prints its own coloured line (on stdout); forwarded, it is ours on stderr.
    expect(await until(() => /retried \d+ times/.test(stderr), 30_000), `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(true);
    expect(stdout.trim()).toBe('polling');
    expect(stderr).not.toMatch(/\u001b\[/);
    for (const line of stderr.trim().split('\n')) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z \[(WARN|ERROR)\] /);
    expect(stderr).toMatch(/\[WARN\] gRPC call poll_\w+ retried \d+ times \{ sdkComponent: 'core', target: 'temporalio_client::retry'/);
  });
});

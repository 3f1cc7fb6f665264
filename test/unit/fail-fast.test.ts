/** A dead server is said at once, and the SDK's log has no colours off a terminal (issue 19, item 14). */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { refusedReason } from '../../infra/connection';
import { formatLogEntry } from '../../worker/runtime-logger';
import { cli, isolateEnvironment } from '../helpers/cli';

isolateEnvironment();

/** A port nothing listens on: bound, then closed. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a dead Temporal server', () => {
  it('costs well under a second before the clear error', async () => {
    process.env.TEMPORAL_ADDRESS = `127.0.0.1:${await deadPort()}`;
    const started = Date.now();
    const { code, err } = await cli('status', 'some-id');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(code).toBe(1);
    expect(err).toMatch(/Cannot reach the Temporal server at 127\.0\.0\.1:\d+ \(nothing listens there\)[\s\S]*npm run server/);
  });

  it('is told apart from a live port, which the gRPC connect then judges', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expect(await refusedReason(`127.0.0.1:${(server.address() as net.AddressInfo).port}`)).toBeUndefined();
    } finally {
      server.close();
    }
    expect(await refusedReason(`127.0.0.1:${await deadPort()}`)).toMatch(/^ECONNREFUSED/);
  });
});

describe("the worker's log", () => {
  it('has no colours when stderr is not a terminal', () => {
    const entry = { level: 'WARN' as const, message: '\u001b[33mretrying\u001b[0m poll', meta: { attempt: 2 }, timestampNanos: 1_700_000_000_000_000_000n };
    const plain = formatLogEntry(entry, false);
    expect(plain).not.toMatch(/\u001b/);
    expect(plain).toBe('2023-11-14T22:13:20.000Z [WARN] retrying poll { attempt: 2 }');
  });
});

/**
 * The client's retry outlives no closed connection (infra/grpc-retry.ts): a call that failed
 * retryably (UNAVAILABLE: nothing listens) and is waiting for its retry when the connection closes
 * is abandoned quietly, instead of the retry timer throwing "Channel has been shut down" where nothing
 * can catch it (with the SDK's default interceptors this file's run never completes: measured, a
 * 60 s timeout).
 */
import { Connection } from '@temporalio/client';
import { expect, it } from 'vitest';
import { closeSafeInterceptors } from '../../infra/grpc-retry';

it('a retry pending when the connection closes is abandoned instead of throwing from its timer', async () => {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: closeSafeInterceptors() });
      const call = connection.workflowService.getSystemInfo({}).then(
        () => 'answered',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      // The first attempt fails at once (connection refused); its retry waits about 100 ms.
      await new Promise((resolve) => setTimeout(resolve, 30));
      await connection.close();
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await Promise.race([call, new Promise((resolve) => setTimeout(() => resolve('abandoned'), 100))])).not.toBe('answered');
    }
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', record);
  }
});

/**
 * The Temporal client's gRPC retry, safe to close under. `@temporalio/client` retries a failed call
 * after a `setTimeout`, and `Connection.close()` does not clear those timers: a retry that fires
 * after the close throws "Channel has been shut down" synchronously inside the timer, an uncaught
 * exception nobody can catch (seen once in a full test run, from a test's closed client; the same
 * bug is reported against the SDK by other projects). Here such a retry starts a call that never
 * ends: the connection is gone, so is whoever waited on it (a CLI command that finished, a test's
 * client). It cannot report an error instead: the SDK's retry then calls a message callback that a
 * call which never received a message does not have ("savedMessageNext is not a function", uncaught
 * too — measured in a full test run). The abandoned call holds no timer or socket.
 */
import type { InterceptingCall, Interceptor } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

const CLOSED = 'Channel has been shut down';

/** The interceptors for Connection.connect: the SDK's default retry, with closed channels handled. */
export function closeSafeInterceptors(): Interceptor[] {
  const retry = makeGrpcRetryInterceptor(defaultGrpcRetryOptions());
  return [
    (options, nextCall) =>
      retry(options, (callOptions) => {
        try {
          return nextCall(callOptions);
        } catch (error) {
          if (error instanceof Error && error.message === CLOSED) return closedCall();
          throw error;
        }
      }),
  ];
}

/** A call on a closed channel: it never reports (see above). */
function closedCall(): InterceptingCall {
  return {
    start() {},
    sendMessage() {},
    sendMessageWithContext() {},
    startRead() {},
    halfClose() {},
    cancelWithStatus() {},
    getPeer: () => '',
    setCredentials() {},
    getAuthContext: () => null,
  } as unknown as InterceptingCall;
}

/**
 * The Temporal client's gRPC retry, safe to close under. `@temporalio/client` retries a failed call
 * after a `setTimeout`, and `Connection.close()` does not clear those timers: a retry that fires
 * after the close throws "Channel has been shut down" synchronously inside the timer, an uncaught
 * exception nobody can catch (seen once in a full test run, from a test's closed client; the same
 * bug is reported against the SDK by other projects). Here such a retry ends the call as CANCELLED
 * instead, which the retry does not retry and the (already abandoned) caller gets as an error.
 */
import { type Interceptor, type InterceptingCall, type StatusObject, Metadata, status } from '@grpc/grpc-js';
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

/** A call on a closed channel: it ends at once with CANCELLED. */
function closedCall(): InterceptingCall {
  return {
    start(_metadata: Metadata, listener?: { onReceiveStatus?: (status: StatusObject) => void }) {
      setImmediate(() => listener?.onReceiveStatus?.({ code: status.CANCELLED, details: `${CLOSED} (the connection was closed)`, metadata: new Metadata() }));
    },
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

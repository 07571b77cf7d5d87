import * as grpc from '@grpc/grpc-js';
import type { Engine } from './engine.ts';
import { FirestoreError, unimplemented } from './errors.ts';
import type { Faults } from './faults.ts';
import { firestoreService } from './protos.ts';

// google.firestore.v1.Firestore over gRPC, as firebase-admin (@google-cloud/firestore) calls it.

const UNAVAILABLE: grpc.ServiceError = Object.assign(new Error('The Firestore stand-in is unavailable.'), {
  code: grpc.status.UNAVAILABLE,
  details: 'The Firestore stand-in is unavailable (fault injected): the connection was dropped.',
  metadata: new grpc.Metadata(),
});

type Handler = (request: never) => unknown;

export function createGrpcServer(engine: Engine, faults: Faults, log: (line: string) => void): grpc.Server {
  const toStatus = (error: unknown): Partial<grpc.StatusObject> => {
    if (error instanceof FirestoreError) return { code: error.grpcCode, details: error.message };
    log(`Firestore stand-in: internal error: ${(error as Error)?.stack ?? String(error)}`);
    return {
      code: grpc.status.INTERNAL,
      details: `Internal error in the Firestore stand-in: ${String(error)}`,
    };
  };
  const admitted = (call: { on(event: 'cancelled', listener: () => void): unknown }, drop: () => void) =>
    faults.admit(drop, (forget) => call.on('cancelled', forget));

  const unary =
    (fn: Handler): grpc.handleUnaryCall<unknown, unknown> =>
    (call, callback) => {
      if (!admitted(call, () => callback(UNAVAILABLE))) return;
      try {
        callback(null, fn(call.request as never));
      } catch (error) {
        callback(toStatus(error));
      }
    };

  const serverStreaming =
    (fn: Handler): grpc.handleServerStreamingCall<unknown, unknown> =>
    (call) => {
      if (!admitted(call, () => call.emit('error', UNAVAILABLE))) return;
      // Headers first, as a server that took the call: google-gax re-sends a streaming call whose error
      // arrives without response headers (retry-request's "no response" retries), which would repeat a
      // permanent refusal three times with back-off.
      call.sendMetadata(new grpc.Metadata());
      try {
        for (const response of fn(call.request as never) as unknown[]) call.write(response);
        call.end();
      } catch (error) {
        call.emit('error', toStatus(error));
      }
    };

  // Cloud Firestore reports a listen target it cannot serve as a REMOVE target change carrying the
  // error, which the SDKs hand to the listener's error callback (a failed stream would only be reopened).
  const refuseListen: grpc.handleBidiStreamingCall<{ addTarget?: { targetId?: number } }, unknown> = (
    call,
  ) => {
    const refusal = unimplemented('realtime listeners (the Listen stream, onSnapshot)');
    call.on('data', (request) => {
      if (!request.addTarget) return;
      const cause = { code: refusal.grpcCode, message: refusal.message };
      call.write({
        targetChange: { targetChangeType: 'REMOVE', targetIds: [request.addTarget.targetId ?? 0], cause },
      });
    });
    call.on('end', () => call.end());
  };

  const served: Record<string, grpc.UntypedHandleCall> = {
    BatchGetDocuments: serverStreaming((r) => engine.batchGetDocuments(r)),
    BeginTransaction: unary((r) => engine.beginTransaction(r)),
    Commit: unary((r) => engine.commit(r)),
    Rollback: unary((r) => engine.rollback(r)),
    RunQuery: serverStreaming((r) => engine.runQuery(r)),
    RunAggregationQuery: serverStreaming((r) => engine.runAggregationQuery(r)),
    Listen: refuseListen,
  };
  // Every other method of the service is refused by name (BatchWrite, ListDocuments, PartitionQuery, ...).
  const handlers = Object.fromEntries(
    Object.entries(firestoreService).map(([name, method]) => {
      if (served[name]) return [name, served[name]];
      const refusal = () => toStatus(unimplemented(`the ${name} method`));
      if (method.requestStream || method.responseStream) {
        return [name, (call: grpc.ServerWritableStream<unknown, unknown>) => call.emit('error', refusal())];
      }
      return [name, ((_call, callback) => callback(refusal())) as grpc.handleUnaryCall<unknown, unknown>];
    }),
  );
  // Cloud Firestore takes requests up to 10 MiB (a commit of many large documents); grpc-js's default
  // limit is 4 MiB.
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 11 * 1024 * 1024 });
  server.addService(firestoreService, handlers);
  return server;
}

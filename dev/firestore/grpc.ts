import * as grpc from '@grpc/grpc-js';
import type { Engine } from './engine.ts';
import { FirestoreError, unimplemented } from './errors.ts';
import type { Outage } from './outage.ts';
import { firestoreService } from './protos.ts';

// google.firestore.v1.Firestore over gRPC, as firebase-admin (@google-cloud/firestore) calls it.

const UNAVAILABLE: grpc.ServiceError = Object.assign(new Error('The Firestore stand-in is unavailable.'), {
  code: grpc.status.UNAVAILABLE,
  details: 'The Firestore stand-in is unavailable (fault injected): the connection was dropped.',
  metadata: new grpc.Metadata(),
});

function toServiceError(error: unknown, log: (line: string) => void): Partial<grpc.StatusObject> {
  if (error instanceof FirestoreError) return { code: error.grpcCode, details: error.message };
  log(`Firestore stand-in: internal error: ${(error as Error)?.stack ?? String(error)}`);
  return {
    code: grpc.status.INTERNAL,
    details: `Internal error in the Firestore stand-in: ${String(error)}`,
  };
}

type Handler = (request: never) => unknown;

export function createGrpcServer(engine: Engine, outage: Outage, log: (line: string) => void): grpc.Server {
  const admitted = (call: { on(event: 'cancelled', listener: () => void): unknown }, drop: () => void) =>
    outage.admit(drop, (forget) => call.on('cancelled', forget));

  const unary =
    (fn: Handler): grpc.handleUnaryCall<unknown, unknown> =>
    (call, callback) => {
      if (!admitted(call, () => callback(UNAVAILABLE))) return;
      try {
        callback(null, fn(call.request as never));
      } catch (error) {
        callback(toServiceError(error, log));
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
      let responses: unknown[];
      try {
        responses = fn(call.request as never) as unknown[];
      } catch (error) {
        call.emit('error', toServiceError(error, log));
        return;
      }
      for (const response of responses) call.write(response);
      call.end();
    };

  const refuseUnary =
    (feature: string): grpc.handleUnaryCall<unknown, unknown> =>
    (_call, callback) =>
      callback(toServiceError(unimplemented(feature), log));

  // Cloud Firestore reports a listen target it cannot serve as a REMOVE target change carrying the
  // error, which the SDKs hand to the listener's error callback (a failed stream would only be reopened).
  const refuseListen: grpc.handleBidiStreamingCall<{ addTarget?: { targetId?: number } }, unknown> = (
    call,
  ) => {
    const refusal = unimplemented('realtime listeners (the Listen stream, onSnapshot)');
    call.on('data', (request) => {
      if (!request.addTarget) return;
      call.write({
        targetChange: {
          targetChangeType: 'REMOVE',
          targetIds: [request.addTarget.targetId ?? 0],
          cause: { code: refusal.grpcCode, message: refusal.message },
        },
      });
    });
    call.on('end', () => call.end());
  };

  const refuseWriteStream: grpc.handleBidiStreamingCall<unknown, unknown> = (call) =>
    call.emit('error', toServiceError(unimplemented('the Write stream'), log));

  // Cloud Firestore takes requests up to 10 MiB (a commit of many large documents); grpc-js's default
  // limit is 4 MiB.
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 11 * 1024 * 1024 });
  server.addService(firestoreService, {
    BatchGetDocuments: serverStreaming((r) => engine.batchGetDocuments(r)),
    BeginTransaction: unary((r) => engine.beginTransaction(r)),
    Commit: unary((r) => engine.commit(r)),
    Rollback: unary((r) => engine.rollback(r)),
    RunQuery: serverStreaming((r) => engine.runQuery(r)),
    RunAggregationQuery: serverStreaming((r) => engine.runAggregationQuery(r)),
    BatchWrite: unary((r) => engine.batchWrite(r)),
    ListCollectionIds: unary((r) => engine.listCollectionIds(r)),
    GetDocument: unary((r) => engine.getDocument(r)),
    ListDocuments: unary((r) => engine.listDocuments(r)),
    CreateDocument: unary((r) => engine.createDocument(r)),
    UpdateDocument: unary((r) => engine.updateDocument(r)),
    DeleteDocument: unary((r) => engine.deleteDocument(r)),
    PartitionQuery: refuseUnary('PartitionQuery (query partitioning)'),
    Write: refuseWriteStream,
    Listen: refuseListen,
  });
  return server;
}

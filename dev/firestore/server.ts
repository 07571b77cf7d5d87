import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { CONTROL_PREFIX, close, listen, sendJson, serveControl } from '../http.ts';
import { Engine, type StoredDocument } from './engine.ts';
import { FirestoreError, unimplemented } from './errors.ts';
import { Faults } from './faults.ts';
import { createGrpcServer } from './grpc.ts';
import { exportData, importData } from './persistence.ts';
import { toRestJson } from './protos.ts';
import { answerPreflight, corsHeaders, handleRest, sendError } from './rest.ts';
import { fieldsToPlain, microsToTimestamp, timestampToIso } from './values.ts';

export interface FirestoreStandInOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** The one project served (its `(default)` database); default demo-goody. */
  projectId?: string;
  /** Keep the data here: loaded at start (when there is an export), written when stopped. */
  dataDir?: string;
  /** Print nothing (no banner). Internal errors still go to stderr. */
  quiet?: boolean;
}

/** A document as the control state and `documents()` show it. */
export type DocumentDump = ReturnType<typeof dump>;

export interface FirestoreStandIn {
  readonly host: string;
  readonly port: number;
  /** `host:port`, the value for FIRESTORE_EMULATOR_HOST and connectFirestoreEmulator. */
  readonly hostPort: string;
  readonly faults: Faults;
  /** Document requests held unanswered by the `unavailable` fault right now. */
  readonly heldRequests: number;
  /** Clears all data and faults. */
  reset(): void;
  /** The documents, or those of one collection (an id at any depth, or a path). */
  documents(collection?: string): DocumentDump[];
  /** Stops serving (writing the data to dataDir first when set). */
  stop(): Promise<void>;
}

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0');
const EMULATOR_RESET = /^\/emulator\/v1\/projects\/([^/]+)\/databases\/\(default\)\/documents$/;

function dump(doc: StoredDocument) {
  return {
    name: doc.name,
    path: doc.path.join('/'),
    id: doc.path.at(-1) as string,
    createTime: timestampToIso(microsToTimestamp(doc.createTime)),
    updateTime: timestampToIso(microsToTimestamp(doc.updateTime)),
    /** The fields as plain JSON (timestamps as ISO strings, bytes base64), for reading. */
    data: fieldsToPlain(doc.fields),
    /** The fields exactly, in the API's proto3 JSON form. */
    fields: (toRestJson('Document', { fields: doc.fields }) as { fields?: unknown }).fields ?? {},
  };
}

export async function startFirestoreStandIn(
  options: FirestoreStandInOptions = {},
): Promise<FirestoreStandIn> {
  const host = options.host ?? '127.0.0.1';
  const projectId = options.projectId ?? 'demo-goody';
  const log = (line: string) => {
    if (!options.quiet) console.log(line);
  };
  const logError = (line: string) => console.error(line);

  const faults = new Faults();
  const engine = new Engine(`projects/${projectId}/databases/(default)`, faults);
  if (options.dataDir) {
    await mkdir(options.dataDir, { recursive: true });
    const count = await importData(engine, options.dataDir);
    if (count > 0) log(`Firestore stand-in: loaded ${count} documents from ${options.dataDir}`);
  }
  const documents = (collection?: string) => engine.documents(collection).map(dump);
  const reset = () => {
    engine.reset();
    faults.clear();
  };

  const control = {
    state: (query: URLSearchParams) => ({ documents: documents(query.get('collection') || undefined) }),
    reset,
    faults,
  };

  const httpServer = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      if (url.pathname.startsWith(CONTROL_PREFIX)) {
        await serveControl(req, res, url.pathname, url.searchParams, control);
        return;
      }
      const emulator = url.pathname.startsWith('/emulator/');
      // A service that stopped answering does not answer CORS preflights either; the control API always does.
      const admitted =
        emulator ||
        faults.admit(
          () => req.socket.destroy(),
          (forget) => req.on('close', forget),
        );
      if (!admitted) return;
      if (req.method === 'OPTIONS') {
        answerPreflight(req, res);
      } else if (emulator) {
        // The Firebase emulator's reset, so tests can run against either; another project holds nothing.
        const reset = EMULATOR_RESET.exec(url.pathname);
        if (/rules/i.test(url.pathname))
          throw unimplemented('security rules: it does not evaluate them, every request is allowed');
        if (!reset || req.method !== 'DELETE') throw unimplemented(`the emulator endpoint ${url.pathname}`);
        if (decodeURIComponent(reset[1] as string) === projectId) engine.reset();
        sendJson(res, 200, {}, corsHeaders(req));
      } else if (url.pathname.startsWith('/v1/')) {
        await handleRest(engine, req, res, url);
      } else if (url.pathname === '/' && req.method === 'GET') {
        res.writeHead(200, { ...corsHeaders(req), 'content-type': 'text/plain' }).end('Ok\n');
      } else {
        throw new FirestoreError('NOT_FOUND', `No such endpoint: ${req.method} ${url.pathname}`);
      }
    } catch (error) {
      if (error instanceof FirestoreError) return sendError(req, res, error);
      logError(`Firestore stand-in: internal error: ${(error as Error)?.stack ?? String(error)}`);
      if (res.headersSent) res.destroy();
      else sendError(req, res, new FirestoreError('INTERNAL', `Internal error: ${String(error)}`));
    }
  });
  httpServer.on('clientError', (_error, socket) => socket.destroy());

  const grpcServer = createGrpcServer(engine, faults, logError);
  const injector = grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());

  // One port for both protocols, as the Firebase emulator: a connection that opens with the HTTP/2
  // preface is gRPC (firebase-admin); anything else is HTTP/1.1 (the web SDK's REST calls, control).
  const sockets = new Set<net.Socket>();
  const netServer = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let seen = Buffer.alloc(0);
    const sniff = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, HTTP2_PREFACE.length);
      const http2 = seen.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n));
      if (http2 && seen.length < HTTP2_PREFACE.length) return;
      socket.off('data', sniff);
      socket.pause();
      socket.unshift(seen);
      if (http2) {
        injector.injectConnection(socket);
      } else {
        httpServer.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', sniff);
  });

  const port = await listen(netServer, options.port ?? 0, host);
  const hostPort = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  log(
    `Firestore stand-in listening on ${hostPort} (REST for firebase/firestore/lite, gRPC for firebase-admin) for project ${projectId}.\n` +
      'It does NOT evaluate Firestore security rules: every request is allowed.',
  );

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      faults.releaseHeld();
      injector.destroy();
      grpcServer.forceShutdown();
      for (const socket of sockets) socket.destroy();
      httpServer.closeAllConnections();
      await close(netServer);
      if (options.dataDir) {
        const count = await exportData(engine, options.dataDir);
        log(`Firestore stand-in: wrote ${count} documents to ${options.dataDir}`);
      }
    })();
    return stopping;
  };

  return {
    host,
    port,
    hostPort,
    faults,
    get heldRequests() {
      return faults.heldCount;
    },
    reset,
    documents,
    stop,
  };
}

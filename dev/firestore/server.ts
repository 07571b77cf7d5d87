import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { type DumpedDocument, Engine } from './engine.ts';
import { FirestoreError, invalidArgument, unimplemented } from './errors.ts';
import { type FaultState, Faults } from './faults.ts';
import { createGrpcServer } from './grpc.ts';
import { Outage } from './outage.ts';
import { exportData, importData } from './persistence.ts';
import { toRestJson } from './protos.ts';
import {
  answerPreflight,
  corsHeaders,
  handleRest,
  parseJson,
  readBody,
  sendError,
  sendJson,
} from './rest.ts';
import { fieldsToPlain, microsToTimestamp, type Plain, timestampToIso } from './values.ts';

export interface FirestoreStandInOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** The project named in the start-up banner, and the one the dump endpoint lists when not told. */
  projectId?: string;
  /** Load data exported earlier (see persistence.ts) from this directory at start. */
  importDir?: string;
  /** Export all data to this directory when stopped. */
  exportOnExit?: string;
  /** Print nothing (no banner). Internal errors still go to stderr. */
  quiet?: boolean;
}

/** A document as the dump endpoint and `documents()` show it. */
export interface DocumentDump {
  name: string;
  path: string;
  id: string;
  createTime: string;
  updateTime: string;
  /** The fields as plain JSON (timestamps as ISO strings, bytes base64), for reading. */
  data: { [key: string]: Plain };
  /** The fields exactly, in the API's proto3 JSON form. */
  fields: unknown;
}

export interface DocumentsQuery {
  /** A collection id (matches at any depth) or a collection path. */
  collection?: string;
  /** A project id; default: the stand-in's projectId option, or every project when it has none. */
  project?: string;
  /** A database id; default `(default)`. */
  database?: string;
}

export interface FirestoreStandIn {
  readonly host: string;
  readonly port: number;
  /** `host:port`, the value for FIRESTORE_EMULATOR_HOST and connectFirestoreEmulator. */
  readonly hostPort: string;
  readonly faults: Faults;
  /** Document requests held unanswered by the `unavailable` fault right now. */
  readonly heldRequests: number;
  /** Clears all data, or one project's (default) database. */
  reset(projectId?: string): void;
  documents(query?: DocumentsQuery): DocumentDump[];
  /** Writes all data to a directory in the import format. */
  exportTo(dir: string): Promise<number>;
  /** Stops serving (exporting first when exportOnExit is set). */
  stop(): Promise<void>;
}

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0');

function dump(doc: DumpedDocument): DocumentDump {
  return {
    name: doc.name,
    path: doc.path,
    id: doc.id,
    createTime: timestampToIso(microsToTimestamp(doc.createTime)),
    updateTime: timestampToIso(microsToTimestamp(doc.updateTime)),
    data: fieldsToPlain(doc.fields),
    fields: (toRestJson('Document', { fields: doc.fields }) as { fields?: unknown }).fields ?? {},
  };
}

export async function startFirestoreStandIn(
  options: FirestoreStandInOptions = {},
): Promise<FirestoreStandIn> {
  const host = options.host ?? '127.0.0.1';
  const quiet = options.quiet === true;
  const log = (line: string) => {
    if (!quiet) console.log(line);
  };
  const logError = (line: string) => console.error(line);

  const faults = new Faults();
  const engine = new Engine({ faults });
  const outage = new Outage(faults);
  if (options.importDir) {
    const count = await importData(engine, options.importDir);
    log(`Firestore stand-in: imported ${count} documents from ${options.importDir}`);
  }

  const documents = (query: DocumentsQuery = {}): DocumentDump[] => {
    const project = query.project ?? options.projectId;
    const databases =
      project === undefined
        ? engine.databaseNames()
        : [`projects/${project}/databases/${query.database ?? '(default)'}`];
    return databases.flatMap((db) => engine.documents(db, query.collection)).map(dump);
  };

  const handleControl = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const reset = /^\/emulator\/v1\/projects\/([^/]+)\/databases\/([^/]+)\/documents$/.exec(url.pathname);
    if (reset && req.method === 'DELETE') {
      engine.reset(
        `projects/${decodeURIComponent(reset[1] as string)}/databases/${decodeURIComponent(reset[2] as string)}`,
      );
      sendJson(req, res, 200, {});
      return;
    }
    if (url.pathname === '/emulator/goody/faults') {
      if (req.method === 'PUT' || req.method === 'POST') faults.apply(parseJson(await readBody(req)));
      else if (req.method === 'DELETE') faults.clear();
      else if (req.method !== 'GET')
        throw invalidArgument(`${req.method} is not supported on ${url.pathname}.`);
      const state: FaultState & { heldRequests: number } = {
        ...faults.state(),
        heldRequests: outage.heldCount,
      };
      sendJson(req, res, 200, state);
      return;
    }
    if (url.pathname === '/emulator/goody/documents' && req.method === 'GET') {
      const query: DocumentsQuery = {};
      for (const key of ['collection', 'project', 'database'] as const) {
        const value = url.searchParams.get(key);
        if (value) query[key] = value;
      }
      sendJson(req, res, 200, { documents: documents(query) });
      return;
    }
    if (/securityRules|:rules/i.test(url.pathname)) {
      throw unimplemented('security rules: it does not evaluate them (every request is allowed)');
    }
    throw unimplemented(`the emulator endpoint ${req.method} ${url.pathname}`);
  };

  const httpServer = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const control = url.pathname.startsWith('/emulator/');
      // A service that stopped answering does not answer CORS preflights either; the control API always does.
      if (
        !control &&
        !outage.admit(
          () => req.socket.destroy(),
          (forget) => req.on('close', forget),
        )
      )
        return;
      if (req.method === 'OPTIONS') {
        answerPreflight(req, res);
        return;
      }
      if (control) {
        await handleControl(req, res, url);
        return;
      }
      if (url.pathname.startsWith('/v1/')) {
        await handleRest(engine, req, res, url);
      } else if (url.pathname === '/' && req.method === 'GET') {
        res.writeHead(200, { ...corsHeaders(req), 'content-type': 'text/plain' }).end('Ok\n');
      } else {
        throw new FirestoreError('NOT_FOUND', `No such endpoint: ${req.method} ${url.pathname}`);
      }
    } catch (error) {
      if (error instanceof FirestoreError) {
        sendError(req, res, error);
        return;
      }
      logError(`Firestore stand-in: internal error: ${(error as Error)?.stack ?? String(error)}`);
      if (!res.headersSent)
        sendError(req, res, new FirestoreError('INTERNAL', `Internal error: ${String(error)}`));
      else res.destroy();
    }
  });
  httpServer.on('clientError', (_error, socket) => socket.destroy());

  const grpcServer = createGrpcServer(engine, outage, logError);
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

  await new Promise<void>((resolve, reject) => {
    netServer.once('error', reject);
    netServer.listen(options.port ?? 0, host, () => {
      netServer.off('error', reject);
      resolve();
    });
  });
  const address = netServer.address() as net.AddressInfo;
  const port = address.port;
  const hostPort = `${host.includes(':') ? `[${host}]` : host}:${port}`;

  log(
    [
      `Firestore stand-in listening on ${hostPort} (REST for firebase/firestore/lite, gRPC for firebase-admin)` +
        (options.projectId ? ` for project ${options.projectId}.` : '.'),
      'It does NOT evaluate Firestore security rules: every request is allowed.',
    ].join('\n'),
  );

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      outage.close();
      await new Promise<void>((resolve) => {
        netServer.close(() => resolve());
        injector.destroy();
        grpcServer.forceShutdown();
        for (const socket of sockets) socket.destroy();
        httpServer.closeAllConnections();
      });
      if (options.exportOnExit) {
        const count = await exportData(engine, options.exportOnExit);
        log(`Firestore stand-in: exported ${count} documents to ${options.exportOnExit}`);
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
      return outage.heldCount;
    },
    reset: (projectId?: string) =>
      engine.reset(projectId === undefined ? undefined : `projects/${projectId}/databases/(default)`),
    documents,
    exportTo: (dir: string) => exportData(engine, dir),
    stop,
  };
}

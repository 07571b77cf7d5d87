import { createRequire } from 'node:module';
import path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { fromProto3JSON, type JSONValue, toProto3JSON } from 'proto3-json-serializer';
import protobuf from 'protobufjs';
import { FirestoreError } from './errors.ts';

// Both protocols share one definition of every message: the official Firestore v1 protos that ship with
// @google-cloud/firestore (the package firebase-admin talks through). gRPC gets them through proto-loader,
// REST converts proto3 JSON through the same protobufjs types, and the engine only ever sees the
// object form below, whichever protocol a request came in on.

const require = createRequire(import.meta.url);
const PROTOS_DIR = path.join(
  path.dirname(require.resolve('@google-cloud/firestore/package.json')),
  'build',
  'protos',
);

/** How decoded messages look to the engine: camelCase keys, int64 as decimal strings, enums as names,
 * bytes as Buffers, unset fields absent (so proto3 zero values are absent too). */
const OBJECT_FORM: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: false,
  oneofs: false,
};

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTOS_DIR, target);
  root.loadSync('google/firestore/v1/firestore.proto');
  // The Web SDKs send `verify` writes in transactions (Write.verify = 5, a document name whose
  // `current_document` precondition is checked without writing). The backend accepts them but googleapis
  // does not publish the field; firebase-js-sdk patches it into its own copy of write.proto the same way.
  const write = root.lookupType('google.firestore.v1.Write');
  const operation = write.oneofs.operation;
  if (!operation) throw new Error('google.firestore.v1.Write has no `operation` oneof');
  const verify = new protobuf.Field('verify', 5, 'string');
  write.add(verify);
  operation.add(verify);
  root.resolveAll();
  return root;
}

export const root = loadRoot();

/** The gRPC service definition, built by proto-loader from the same (patched) types the REST side uses. */
export const firestoreService = (() => {
  const definition = protoLoader.fromJSON(root.toJSON(), OBJECT_FORM);
  const service = definition['google.firestore.v1.Firestore'];
  if (!service || !('BatchGetDocuments' in service))
    throw new Error('google.firestore.v1.Firestore not found');
  return service as protoLoader.ServiceDefinition;
})();

export function messageType(name: string): protobuf.Type {
  return root.lookupType(`google.firestore.v1.${name}`);
}

/**
 * Refuses a name the message type does not have: proto3-json-serializer would drop it silently, and a
 * request the stand-in does not understand must be refused (as Google's front end refuses it), never half-read.
 */
function checkNames(type: protobuf.Type, json: unknown, at: string): void {
  if (json === null || typeof json !== 'object') return;
  for (const [key, value] of Object.entries(json)) {
    const field = type.fields[key];
    if (!field) {
      throw new FirestoreError(
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${key}" at '${at || type.name}': Cannot find field.`,
      );
    }
    const resolved = field.resolve().resolvedType;
    // Well-known types (Timestamp, Int32Value, ...) have JSON forms of their own.
    if (!(resolved instanceof protobuf.Type) || resolved.fullName.startsWith('.google.protobuf.')) continue;
    const items = field.map ? Object.values(value ?? {}) : field.repeated ? [value].flat() : [value];
    for (const item of items) checkNames(resolved, item, at ? `${at}.${field.name}` : field.name);
  }
}

/** Proto3 JSON (as the REST API receives it) to the engine's object form. */
export function fromRestJson<T>(typeName: string, json: unknown): T {
  const type = messageType(typeName);
  checkNames(type, json, '');
  let message: protobuf.Message | null;
  try {
    message = fromProto3JSON(type, json as JSONValue);
  } catch (error) {
    throw new FirestoreError(
      'INVALID_ARGUMENT',
      `Invalid JSON payload received. ${(error as Error).message}`,
    );
  }
  if (!message) throw new FirestoreError('INVALID_ARGUMENT', 'Invalid JSON payload received. Empty message.');
  return type.toObject(message, OBJECT_FORM) as T;
}

/** The engine's object form to proto3 JSON (as the REST API answers). */
export function toRestJson(typeName: string, object: object): JSONValue {
  const type = messageType(typeName);
  return toProto3JSON(type.fromObject(object));
}

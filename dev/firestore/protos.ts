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

/** Well-known types whose proto3 JSON form is not an object of their fields. */
const JSON_SCALAR_TYPES = new Set([
  '.google.protobuf.Timestamp',
  '.google.protobuf.Duration',
  '.google.protobuf.FieldMask',
  '.google.protobuf.Value',
  '.google.protobuf.Struct',
  '.google.protobuf.ListValue',
  '.google.protobuf.Any',
  '.google.protobuf.DoubleValue',
  '.google.protobuf.FloatValue',
  '.google.protobuf.Int64Value',
  '.google.protobuf.UInt64Value',
  '.google.protobuf.Int32Value',
  '.google.protobuf.UInt32Value',
  '.google.protobuf.BoolValue',
  '.google.protobuf.StringValue',
  '.google.protobuf.BytesValue',
]);

function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/**
 * Checks a proto3 JSON object against its message type and returns a copy with every key in its
 * lowerCamelCase form. proto3-json-serializer silently drops names it does not know; a request the
 * stand-in does not understand must be refused instead (as Google's front end refuses it), never
 * half-read.
 */
function normaliseJson(type: protobuf.Type, json: unknown, where: string): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new FirestoreError(
      'INVALID_ARGUMENT',
      `Invalid JSON payload received. Expected an object for ${where || type.name}.`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const name = snakeToCamel(key);
    const field = type.fields[name];
    const at = where ? `${where}.${name}` : name;
    if (!field) {
      throw new FirestoreError(
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${key}" at '${where || type.name}': Cannot find field.`,
      );
    }
    field.resolve();
    const resolved = field.resolvedType;
    if (value === null || !(resolved instanceof protobuf.Type) || JSON_SCALAR_TYPES.has(resolved.fullName)) {
      out[name] = value;
    } else if (field.map) {
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new FirestoreError(
          'INVALID_ARGUMENT',
          `Invalid JSON payload received. Expected a map at '${at}'.`,
        );
      }
      out[name] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, normaliseJson(resolved, v, `${at}[${k}]`)]),
      );
    } else if (field.repeated) {
      if (!Array.isArray(value)) {
        throw new FirestoreError(
          'INVALID_ARGUMENT',
          `Invalid JSON payload received. Expected a list at '${at}'.`,
        );
      }
      out[name] = value.map((v, i) => normaliseJson(resolved, v, `${at}[${i}]`));
    } else {
      out[name] = normaliseJson(resolved, value, at);
    }
  }
  return out;
}

/** Proto3 JSON (as the REST API receives it) to the engine's object form. */
export function fromRestJson<T>(typeName: string, json: unknown): T {
  const type = messageType(typeName);
  const normalised = normaliseJson(type, json, '');
  let message: protobuf.Message | null;
  try {
    message = fromProto3JSON(type, normalised as JSONValue);
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

import { ApiError, badRequest } from './errors.js';
import type { JsonObject } from './util.js';

// kubectl's typed clients send some bodies as Kubernetes protobuf (`application/
// vnd.kubernetes.protobuf`): `auth whoami` posts a SelfSubjectReview, `auth can-i` a
// SelfSubjectAccessReview, `certificate approve`
// puts a CertificateSigningRequest to /approval, `create configmap|secret|namespace` post those.
// A real server decodes every built-in kind; the emulator decodes these (field numbers from k8s.io/api's generated.proto) into the JSON
// the rest of the server handles. Other kinds get 415, as custom resources do on a real server.

type FieldType = 'string' | 'bytes' | 'int' | 'bool' | 'time' | 'map' | 'bytesMap' | Message;
interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
}
type Message = { [field: number]: Field };

const TIME: Message = { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } };
const OWNER_REFERENCE: Message = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};
const OBJECT_META: Message = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int' },
  11: { name: 'labels', type: 'map', repeated: true },
  12: { name: 'annotations', type: 'map', repeated: true },
  13: { name: 'ownerReferences', type: OWNER_REFERENCE, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};
const CSR: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: {
    name: 'spec',
    type: {
      1: { name: 'request', type: 'bytes' },
      2: { name: 'username', type: 'string' },
      3: { name: 'uid', type: 'string' },
      4: { name: 'groups', type: 'string', repeated: true },
      5: { name: 'usages', type: 'string', repeated: true },
      7: { name: 'signerName', type: 'string' },
      8: { name: 'expirationSeconds', type: 'int' },
    },
  },
  3: {
    name: 'status',
    type: {
      1: {
        name: 'conditions',
        repeated: true,
        type: {
          1: { name: 'type', type: 'string' },
          2: { name: 'reason', type: 'string' },
          3: { name: 'message', type: 'string' },
          4: { name: 'lastUpdateTime', type: 'time' },
          5: { name: 'lastTransitionTime', type: 'time' },
          6: { name: 'status', type: 'string' },
        },
      },
      2: { name: 'certificate', type: 'bytes' },
    },
  },
};
const RESOURCE_ATTRIBUTES: Message = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};
const NON_RESOURCE_ATTRIBUTES: Message = {
  1: { name: 'path', type: 'string' },
  2: { name: 'verb', type: 'string' },
};
const SSAR: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: {
    name: 'spec',
    type: {
      1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES },
      2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES },
    },
  },
};
const CONFIG_MAP: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'data', type: 'map' },
  3: { name: 'binaryData', type: 'bytesMap' },
  4: { name: 'immutable', type: 'bool' },
};
const SECRET: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'data', type: 'bytesMap' },
  3: { name: 'type', type: 'string' },
  4: { name: 'stringData', type: 'map' },
  5: { name: 'immutable', type: 'bool' },
};
const NAMESPACE: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
};
const SSRR: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } },
};
/** `kubectl auth whoami`: metadata only (its status is the server's answer). */
const SSR: Message = { 1: { name: 'metadata', type: OBJECT_META } };
const MESSAGES: Record<string, Message> = {
  'authentication.k8s.io/v1/SelfSubjectReview': SSR,
  'authorization.k8s.io/v1/SelfSubjectRulesReview': SSRR,
  'v1/ConfigMap': CONFIG_MAP,
  'v1/Secret': SECRET,
  'v1/Namespace': NAMESPACE,
  'certificates.k8s.io/v1/CertificateSigningRequest': CSR,
  'authorization.k8s.io/v1/SelfSubjectAccessReview': SSAR,
};
const UNKNOWN: Message = {
  1: {
    name: 'typeMeta',
    type: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } },
  },
  2: { name: 'raw', type: 'bytes' },
};

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length) throw badRequest('protobuf: truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return result;
      shift += 7;
    }
  }
  bytes(): Buffer {
    const n = this.varint();
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw badRequest(`protobuf: unsupported wire type ${wire}`);
  }
}

function decode(buf: Buffer, message: Message): JsonObject {
  const out: JsonObject = {};
  const r = new Reader(buf);
  while (!r.done) {
    const tag = r.varint();
    const field = message[Math.floor(tag / 8)];
    const wire = tag & 7;
    if (!field) {
      r.skip(wire);
      continue;
    }
    let value: unknown;
    if (field.type === 'int') value = r.varint();
    else if (field.type === 'bool') value = r.varint() !== 0;
    else {
      const bytes = r.bytes();
      if (field.type === 'string') value = bytes.toString('utf8');
      else if (field.type === 'bytes') value = bytes.toString('base64');
      else if (field.type === 'time') {
        const seconds = Number(decode(bytes, TIME).seconds ?? 0);
        // Go's zero time (year 1) is a negative int64, read here as a huge varint; in JSON a
        // zero metav1.Time is null, so the field is left out.
        if (seconds >= 2 ** 63 || seconds <= 0) continue;
        value = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      } else if (field.type === 'map' || field.type === 'bytesMap') {
        const entry = decode(bytes, {
          1: { name: 'key', type: 'string' },
          2: { name: 'value', type: field.type === 'map' ? 'string' : 'bytes' },
        });
        const map = (out[field.name] ??= {}) as JsonObject;
        map[String(entry.key)] = entry.value ?? '';
        continue;
      } else value = decode(bytes, field.type);
    }
    if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
    else out[field.name] = value;
  }
  return out;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a `k8s\0`-enveloped protobuf body into the JSON object it stands for. */
export function decodeProtobuf(body: Buffer): JsonObject {
  if (!body.subarray(0, 4).equals(MAGIC))
    throw badRequest('provided object is not a Kubernetes protobuf envelope');
  const unknown = decode(body.subarray(4), UNKNOWN);
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const key = `${typeMeta.apiVersion ?? ''}/${typeMeta.kind ?? ''}`;
  const message = MESSAGES[key];
  if (!message)
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
  const raw = Buffer.from(typeof unknown.raw === 'string' ? unknown.raw : '', 'base64');
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...decode(raw, message) };
}

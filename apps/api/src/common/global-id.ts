import { userInputError } from './errors.js';

/**
 * Opaque global IDs in the Relay/GitHub style: base64url of `<Type>:<uuid>`. Clients treat them
 * as strings; `node(id:)` resolves any of them. Mutations also accept a cluster's raw UID (what
 * the sidecar's CLUSTER_ID holds), so scripts can use either.
 */
export type NodeType = 'Cluster' | 'ApiToken' | 'Rollout';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a UUID (what PostgreSQL's uuid type accepts from this API). */
export const isUuid = (value: unknown): value is string =>
  typeof value === 'string' && UUID.test(value);

export const toGlobalId = (type: NodeType, uid: string): string =>
  Buffer.from(`${type}:${uid}`, 'utf8').toString('base64url');

export function parseGlobalId(id: string): { type: string; uid: string } | undefined {
  const decoded = Buffer.from(id, 'base64url').toString('utf8');
  const colon = decoded.indexOf(':');
  const uid = decoded.slice(colon + 1);
  if (colon < 1 || !UUID.test(uid)) return undefined;
  return { type: decoded.slice(0, colon), uid: uid.toLowerCase() };
}

/** A UID from a global ID of the expected type, or a raw UUID; BAD_USER_INPUT otherwise. */
export function uidOf(type: NodeType, id: string, field: string): string {
  if (UUID.test(id)) return id.toLowerCase();
  const parsed = parseGlobalId(id);
  if (parsed?.type === type) return parsed.uid;
  throw userInputError(field, `must be a ${type} ID`);
}

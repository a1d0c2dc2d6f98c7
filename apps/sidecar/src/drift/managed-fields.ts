import { FIELD_MANAGER } from '@fleet/contracts';

/** One entry of metadata.managedFields, as the API server writes it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: string | Date;
  fieldsV1?: unknown;
}

// A path is the fieldsV1 keys from the root to a leaf (`f:spec`, `k:{"key":"x"}`, `v:"a"`, `.`),
// joined with '\n' — a character no fieldsV1 key contains unescaped.
const SEP = '\n';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The leaves of a fieldsV1 tree (and `.` markers of list items owned as a whole). */
export function fieldsV1Leaves(fieldsV1: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (o: Record<string, unknown>, path: string[]): void => {
    const keys = Object.keys(o);
    if (keys.length === 0 && path.length) out.add(path.join(SEP));
    for (const k of keys) {
      if (k === '.') out.add([...path, '.'].join(SEP));
      else if (isObject(o[k])) walk(o[k], [...path, k]);
    }
  };
  if (isObject(fieldsV1)) walk(fieldsV1, []);
  return out;
}

/**
 * Whether a manager is the fleet's own: the sidecar writes under FIELD_MANAGER and a few
 * `karpenter-fleet-…` managers (the NodeClass enforcer); ownership moving among them is the
 * fleet talking to itself, never drift.
 */
export const isFleetManager = (manager: string | undefined): boolean =>
  manager === FIELD_MANAGER || (manager ?? '').startsWith(`${FIELD_MANAGER}-`);

/** What the fleet's field manager set with server-side apply on the object (not its /status). */
export function fleetAppliedFields(managedFields: readonly ManagedFieldsEntry[] = []): Set<string> {
  const out = new Set<string>();
  for (const e of managedFields) {
    if (e.manager !== FIELD_MANAGER || e.operation !== 'Apply' || e.subresource) continue;
    for (const p of fieldsV1Leaves(e.fieldsV1)) out.add(p);
  }
  return out;
}

/**
 * Who owns a path now, other than the fleet: the manager whose fields hold it, or hold the
 * list item or atomic field it sits in (an atomic list is owned as one leaf).
 */
export function ownerOf(
  managedFields: readonly ManagedFieldsEntry[] = [],
  path: string,
): string | undefined {
  const segs = path.split(SEP);
  for (const e of managedFields) {
    if (isFleetManager(e.manager) || e.subresource) continue;
    const leaves = fieldsV1Leaves(e.fieldsV1);
    for (let n = segs.length; n > 0; n--) {
      const prefix = segs.slice(0, n).join(SEP);
      if (leaves.has(prefix) || leaves.has(`${prefix}${SEP}.`)) return e.manager;
    }
  }
  return undefined;
}

/** `.spec.template.spec.requirements[key="kubernetes.io/arch"]` from a fieldsV1 path. */
export function displayPath(path: string): string {
  let s = '';
  for (const seg of path.split(SEP)) {
    if (seg === '.') continue;
    if (seg.startsWith('f:')) s += `.${seg.slice(2)}`;
    else if (seg.startsWith('k:')) {
      let keys: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(seg.slice(2));
        if (isObject(parsed)) keys = parsed;
      } catch {
        s += `[${seg.slice(2)}]`;
        continue;
      }
      s += `[${Object.entries(keys)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (seg.startsWith('v:')) s += `[=${seg.slice(2)}]`;
    else s += `.${seg}`;
  }
  return s || '.';
}

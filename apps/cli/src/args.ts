import { parseAllDocuments } from 'yaml';
import { usageError } from './errors.js';

/** `k=v` pairs (register, --label): later pairs win, as with kubectl. */
export function parseLabelPairs(
  pairs: readonly string[],
  flag = '--label',
): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw usageError(`${flag} ${pair}: expected key=value`, flag);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

export interface LabelChanges {
  set: Record<string, string>;
  remove: string[];
}

/** `kfleet clusters label` arguments: `k=v` sets, `k-` removes (kubectl label syntax). */
export function parseLabelChanges(args: readonly string[]): LabelChanges {
  const changes: LabelChanges = { set: {}, remove: [] };
  if (args.length === 0) throw usageError('give at least one key=value or key- argument');
  for (const arg of args) {
    if (arg.endsWith('-') && !arg.includes('=')) {
      const key = arg.slice(0, -1);
      if (!key) throw usageError(`${arg}: expected key- to remove a label`);
      changes.remove.push(key);
    } else {
      Object.assign(changes.set, parseLabelPairs([arg], 'label'));
    }
  }
  const both = changes.remove.filter((key) => key in changes.set);
  if (both.length) throw usageError(`label ${both.join(', ')} is both set and removed`);
  return changes;
}

/** The full label map to send: the API replaces labels as a whole, so merge on this side. */
export function applyLabelChanges(
  current: Record<string, string>,
  changes: LabelChanges,
): Record<string, string> {
  const next = { ...current, ...changes.set };
  for (const key of changes.remove) delete next[key];
  return next;
}

/** `--feature-gate Drift=true` (repeatable) → {"Drift": true}. */
export function parseFeatureGates(pairs: readonly string[]): Record<string, boolean> {
  const gates: Record<string, boolean> = {};
  for (const pair of pairs) {
    const match = /^([A-Za-z][A-Za-z0-9]*)=(true|false)$/.exec(pair);
    if (!match) {
      throw usageError(`--feature-gate ${pair}: expected Name=true or Name=false`, 'featureGates');
    }
    gates[match[1]!] = match[2] === 'true';
  }
  return gates;
}

const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** `30d`, `12h`, `90m`, `2w` → milliseconds. */
export function parseDuration(text: string, flag = '--expires-in'): number {
  const match = /^(\d+)([smhdw])$/.exec(text.trim());
  if (!match || Number(match[1]) <= 0) {
    throw usageError(`${flag} ${text}: expected a positive duration such as 30d, 12h, 90m`, flag);
  }
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

export function parseIntOption(text: string, flag: string, min = 0): number {
  if (!/^-?\d+$/.test(text.trim()) || Number(text) < min) {
    throw usageError(`${flag} ${text}: expected an integer of at least ${min}`, flag);
  }
  return Number(text);
}

/** `disable|keep|migrate` (any case) → the GraphQL enum value. */
export function parseCasMode(text: string): 'DISABLE' | 'KEEP' | 'MIGRATE' {
  const mode = text.toUpperCase();
  if (mode === 'DISABLE' || mode === 'KEEP' || mode === 'MIGRATE') return mode;
  throw usageError(`--cas ${text}: expected disable, keep or migrate`, '--cas');
}

export function parseLogLevel(text: string): 'debug' | 'info' | 'error' {
  const level = text.toLowerCase();
  if (level === 'debug' || level === 'info' || level === 'error') return level;
  throw usageError(`--log-level ${text}: expected debug, info or error`, '--log-level');
}

export function parseEnumOption<T extends string>(
  text: string,
  flag: string,
  values: readonly T[],
): T {
  const upper = text.toUpperCase();
  const found = values.find((v) => v === upper);
  if (!found) throw usageError(`${flag} ${text}: expected one of ${values.join(', ')}`, flag);
  return found;
}

export interface NodePoolDocument {
  name: string;
  spec: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A NodePool manifest (`kind: NodePool`, name from metadata.name unless --name overrides) or a
 * bare spec (then --name is required). One document only: applying the first of several
 * silently would surprise.
 */
export function parseNodePoolDocument(text: string, nameFlag?: string): NodePoolDocument {
  const docs = parseAllDocuments(text).filter((d) => d.contents !== null);
  if (docs.length !== 1) {
    throw usageError(`expected exactly one YAML document, found ${docs.length}`, '-f');
  }
  const doc = docs[0]!;
  if (doc.errors.length) throw usageError(`invalid YAML: ${doc.errors[0]!.message}`, '-f');
  const value: unknown = doc.toJS();
  if (!isObject(value)) throw usageError('expected a NodePool manifest or a NodePool spec', '-f');
  if ('kind' in value || 'apiVersion' in value) {
    if (value.kind !== 'NodePool') {
      throw usageError(`expected kind NodePool, got ${String(value.kind)}`, 'kind');
    }
    const metadata = isObject(value.metadata) ? value.metadata : {};
    const name = nameFlag ?? (typeof metadata.name === 'string' ? metadata.name : undefined);
    if (!name) throw usageError('the NodePool has no metadata.name; give --name', 'metadata.name');
    if (!isObject(value.spec)) throw usageError('the NodePool has no spec', 'spec');
    return { name, spec: value.spec };
  }
  if (!nameFlag) throw usageError('a bare NodePool spec needs --name', '--name');
  return { name: nameFlag, spec: value };
}

/** `1,10%,50%,100%` → [{count: 1}, {percent: 10}, ...] (cumulative wave steps). */
export function parseWaves(text: string): ({ count: number } | { percent: number })[] {
  return text.split(',').map((raw) => {
    const step = raw.trim();
    const match = /^(\d+)(%?)$/.exec(step);
    if (!match) throw usageError(`--waves ${text}: "${step}" is not N or N%`, '--waves');
    return match[2] ? { percent: Number(match[1]) } : { count: Number(match[1]) };
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a cluster argument is an ID (a raw UID, or an opaque global ID decoding to
 * `Cluster:<uuid>`) rather than a name. Names are DNS-1123 labels, which never decode to that.
 */
export function isClusterId(ref: string): boolean {
  if (UUID.test(ref)) return true;
  if (!/^[A-Za-z0-9_-]+$/.test(ref)) return false;
  const decoded = Buffer.from(ref, 'base64url').toString('utf8');
  return decoded.startsWith('Cluster:') && UUID.test(decoded.slice('Cluster:'.length));
}

/** `--condition Degraded=True` or `Available=False:NoNodes` → the API's ConditionFilter. */
export function parseConditionFilter(text: string): {
  type: string;
  status?: string;
  reason?: string;
} {
  const match =
    /^([A-Za-z][A-Za-z0-9]*)(?:=(True|False|Unknown)(?::([A-Za-z][A-Za-z0-9]*))?)?$/.exec(
      text.trim(),
    );
  if (!match)
    throw usageError(
      `--condition ${text}: expected Type, Type=Status or Type=Status:Reason (Status True, False or Unknown)`,
      '--condition',
    );
  return {
    type: match[1]!,
    ...(match[2] ? { status: match[2] } : {}),
    ...(match[3] ? { reason: match[3] } : {}),
  };
}

/** `--grace 0`, `--grace 30m`: like `parseSeconds`, but 0 (end at once) is a valid answer. */
export const parseGraceSeconds = (text: string, flag = '--grace'): number =>
  /^0[smhdw]?$/.test(text.trim()) ? 0 : parseSeconds(text, flag);

/** `--since 24h` style durations, and `--step 5m`, in whole seconds. */
export const parseSeconds = (text: string, flag: string): number =>
  Math.round(parseDuration(text, flag) / 1000);

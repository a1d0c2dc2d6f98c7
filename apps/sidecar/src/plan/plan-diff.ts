import { PLAN_DIFF_FIELDS_MAX, type FieldDiff } from '@fleet/contracts';

/** Metadata the API server keeps for itself: never part of a plan's diff. */
const NOISE = [
  'resourceVersion',
  'managedFields',
  'generation',
  'uid',
  'creationTimestamp',
  'selfLink',
];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy without the API server's bookkeeping (and, for a comparison, without `status`). */
export function withoutNoise(object: unknown): Json {
  if (!isObject(object)) return {};
  const { status: _status, ...rest } = structuredClone(object);
  const metadata = isObject(rest.metadata) ? { ...rest.metadata } : undefined;
  if (metadata) {
    for (const key of NOISE) delete metadata[key];
    rest.metadata = metadata;
  }
  return rest;
}

/** `.spec.limits.cpu`; keys that are not plain words are quoted: `.metadata.labels["a/b"]`. */
const step = (path: string, key: string) =>
  /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

const equal = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => equal(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!equal(a[k], b[k])) return false;
    return true;
  }
  return false;
};

function walk(before: unknown, after: unknown, path: string, out: FieldDiff[]): void {
  if (equal(before, after)) return;
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) walk(before[key], after[key], step(path, key), out);
    return;
  }
  if (isObject(after) && before === undefined) {
    for (const key of Object.keys(after).sort()) walk(undefined, after[key], step(path, key), out);
    return;
  }
  if (isObject(before) && after === undefined) {
    for (const key of Object.keys(before).sort())
      walk(before[key], undefined, step(path, key), out);
    return;
  }
  // Lists of the same length are compared element by element; otherwise the list is one value.
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((v, i) => walk(v, after[i], `${path}[${i}]`, out));
    return;
  }
  out.push({
    path,
    ...(before === undefined ? {} : { before }),
    ...(after === undefined ? {} : { after }),
  });
}

/**
 * The fields that differ between the live object and what the API server answered it would
 * store, leaf by leaf, metadata noise and `status` left out. Bounded: the first
 * PLAN_DIFF_FIELDS_MAX fields in path order, and how many more there are.
 */
export function objectDiff(
  live: unknown,
  answer: unknown,
): { diff: FieldDiff[]; moreFields?: number } {
  const out: FieldDiff[] = [];
  walk(live === undefined ? undefined : withoutNoise(live), withoutNoise(answer), '', out);
  if (out.length <= PLAN_DIFF_FIELDS_MAX) return { diff: out };
  return {
    diff: out.slice(0, PLAN_DIFF_FIELDS_MAX),
    moreFields: out.length - PLAN_DIFF_FIELDS_MAX,
  };
}

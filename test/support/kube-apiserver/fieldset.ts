import type { JSONSchemaProps } from '@fleet/crd-schema';
import {
  clone,
  deepEqual,
  isObject,
  JsonObject,
  KubeObject,
  ManagedFieldsEntry,
  nowIso,
} from './util.js';

// A tiny structured-merge-diff: field sets are sets of paths in the fieldsV1 key syntax
// (`f:spec`, `k:{"name":"app"}`, `v:"x"`, `.`), joined with '\n'.

export type FieldSet = Set<string>;
const SEP = '\n';

/** Where in the type system we are: a CRD schema node, or a built-in type (by field name). */
export interface TypeRef {
  s?: JSONSchemaProps;
  builtin?: boolean;
  name?: string;
  parent?: string;
  /** At the root of a built-in kind: which one (its zero value, ZERO_VALUE_CONTAINERS). */
  kind?: string;
}

interface ListInfo {
  type: 'atomic' | 'set' | 'map';
  keys: string[];
}

const META_SCHEMA: JSONSchemaProps = {
  type: 'object',
  properties: {
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    ownerReferences: {
      type: 'array',
      // An OwnerReference is `+structType=atomic`: each one is a single field.
      items: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        'x-kubernetes-map-type': 'atomic',
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
    },
  },
};

/** Merge keys of the core types, from their `patchMergeKey`/`listMapKey` tags. */
function builtinList(name: string | undefined, parent: string | undefined): ListInfo {
  switch (name ?? '') {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'volumes':
    case 'env':
    case 'imagePullSecrets':
    case 'secrets':
    case 'subjects':
      return name === 'subjects' ? { type: 'atomic', keys: [] } : { type: 'map', keys: ['name'] };
    case 'volumeMounts':
      return { type: 'map', keys: ['mountPath'] };
    case 'ports':
      return parent === 'containers'
        ? { type: 'map', keys: ['containerPort', 'protocol'] }
        : { type: 'map', keys: ['port', 'protocol'] };
    case 'conditions':
      return { type: 'map', keys: ['type'] };
    case 'finalizers':
      return { type: 'set', keys: [] };
    case 'ownerReferences':
      return { type: 'map', keys: ['uid'] };
    case 'validationActions':
      return { type: 'set', keys: [] };
    default:
      return { type: 'atomic', keys: [] };
  }
}

export function childRef(ref: TypeRef, key: string, root = false): TypeRef {
  if (root && key === 'metadata') return { s: META_SCHEMA };
  if (ref.builtin) return { builtin: true, name: key, parent: ref.name };
  const s = ref.s;
  if (!s) return {};
  const p =
    s.properties?.[key] ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
  return p ? { s: p } : {};
}

function itemRef(ref: TypeRef): TypeRef {
  if (ref.builtin) return { builtin: true, name: ref.name, parent: ref.name };
  return ref.s?.items ? { s: ref.s.items } : {};
}

function listInfo(ref: TypeRef): ListInfo {
  if (ref.builtin) return builtinList(ref.name, ref.parent);
  const t = ref.s?.['x-kubernetes-list-type'];
  if (t === 'map') return { type: 'map', keys: ref.s?.['x-kubernetes-list-map-keys'] ?? [] };
  if (t === 'set') return { type: 'set', keys: [] };
  return { type: 'atomic', keys: [] };
}

/**
 * Built-in structs marked `+structType=atomic` and maps marked `+mapType=atomic` (one field
 * each): a binding's `roleRef`, a label selector, an ObjectReference (an Event's
 * `involvedObject`), the env var selectors, an admission policy's MatchResources, a pod's
 * `nodeSelector`. (Owner references: META_SCHEMA.)
 */
const ATOMIC_BUILTIN_STRUCTS = new Set([
  'roleRef',
  'selector',
  'involvedObject',
  'fieldRef',
  'resourceFieldRef',
  'configMapKeyRef',
  'secretKeyRef',
  'matchConstraints',
  'matchResources',
  'nodeSelector',
]);

/**
 * Containers a built-in kind's zero value already has (Go value structs, lists without
 * `omitempty`): kube-apiserver compares a create with that zero value, so they are never added
 * and get no `.` of their own, unlike pointers, maps and omitted lists. Paths below a list item
 * are not listed: a new item is added whole.
 */
const ZERO_VALUE_CONTAINERS: Record<string, ReadonlySet<string>> = {
  Deployment: new Set([
    'spec.strategy',
    'spec.template',
    'spec.template.metadata',
    'spec.template.spec',
    'spec.template.spec.containers',
  ]),
  Pod: new Set(['spec.containers']),
  Event: new Set(['source']),
  CustomResourceDefinition: new Set(['spec.names', 'status.conditions']),
};

function atomicMap(ref: TypeRef): boolean {
  if (ref.builtin) return ATOMIC_BUILTIN_STRUCTS.has(ref.name ?? '');
  return ref.s?.['x-kubernetes-map-type'] === 'atomic';
}

function keyOf(item: unknown, keys: string[]): string {
  const o: JsonObject = {};
  for (const k of [...keys].sort()) o[k] = isObject(item) ? item[k] : undefined;
  return `k:${JSON.stringify(o)}`;
}

const EXCLUDED_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

export type Scope = 'main' | 'status';

/** The set of leaf fields (plus keyed list items) present in an object. */
export function fieldSetOf(
  obj: KubeObject,
  root: TypeRef,
  scope: Scope,
  statusSplit: boolean,
  /**
   * Each non-empty map and struct below the root (but metadata itself) as a member of its own
   * (`.`): an update owns the containers it creates, as structured-merge-diff's comparison of the
   * old and new object counts them added; an applied configuration's set has only its leaves.
   */
  containers = false,
): FieldSet {
  const out: FieldSet = new Set();
  const zeroValue = root.builtin && root.kind ? ZERO_VALUE_CONTAINERS[root.kind] : undefined;
  const inZeroValue = (path: string[]): boolean =>
    !!zeroValue &&
    path.every((p) => p.startsWith('f:')) &&
    zeroValue.has(path.map((p) => p.slice(2)).join('.'));
  const walkValue = (v: unknown, ref: TypeRef, path: string[]): void => {
    if (Array.isArray(v)) {
      const li = listInfo(ref);
      if (li.type === 'atomic') {
        out.add(path.join(SEP));
        return;
      }
      if (containers && v.length > 0 && !inZeroValue(path)) out.add([...path, '.'].join(SEP));
      if (li.type === 'set')
        for (const item of v) out.add([...path, `v:${JSON.stringify(item)}`].join(SEP));
      else
        for (const item of v) {
          const p = [...path, keyOf(item, li.keys)];
          const itemType = itemRef(ref);
          if (atomicMap(itemType)) {
            out.add(p.join(SEP));
            continue;
          }
          out.add([...p, '.'].join(SEP));
          if (isObject(item)) walkObject(item, itemType, p, false);
        }
      return;
    }
    if (isObject(v) && Object.keys(v).length > 0 && !atomicMap(ref)) {
      // Not metadata (stripped), nor a built-in kind's spec or status: value structs in Go, they
      // exist in the empty object an update is compared with, so they are never added.
      const topLevel = path.length === 1;
      const valueStruct =
        (topLevel && !!root.builtin && (path[0] === 'f:spec' || path[0] === 'f:status')) ||
        inZeroValue(path);
      if (containers && !(topLevel && path[0] === 'f:metadata') && !valueStruct)
        out.add([...path, '.'].join(SEP));
      walkObject(v, ref, path, false);
      return;
    }
    out.add(path.join(SEP));
  };
  const walkObject = (o: JsonObject, ref: TypeRef, path: string[], isRoot: boolean): void => {
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined) continue;
      if (isRoot) {
        if (k === 'apiVersion' || k === 'kind') continue;
        if (statusSplit && scope === 'main' && k === 'status') continue;
        // A status write is credited with the metadata it asked for too, kept or not.
        if (scope === 'status' && k !== 'status' && k !== 'metadata') continue;
      }
      if (path.length === 1 && path[0] === 'f:metadata' && EXCLUDED_META.has(k)) continue;
      walkValue(v, childRef(ref, k, isRoot), [...path, `f:${k}`]);
    }
  };
  walkObject(obj, root, [], true);
  return out;
}

export function toFieldsV1(set: FieldSet): JsonObject {
  const root: JsonObject = {};
  for (const p of [...set].sort()) {
    let cur = root;
    for (const seg of p.split(SEP)) {
      if (!isObject(cur[seg])) cur[seg] = {};
      cur = cur[seg] as JsonObject;
    }
  }
  return root;
}

export function fromFieldsV1(f: unknown): FieldSet {
  const out: FieldSet = new Set();
  const walk = (o: JsonObject, path: string[]): void => {
    const keys = Object.keys(o);
    if (keys.length === 0 && path.length) out.add(path.join(SEP));
    for (const k of keys) {
      if (k === '.') out.add([...path, '.'].join(SEP));
      else if (isObject(o[k])) walk(o[k], [...path, k]);
    }
  };
  if (isObject(f)) walk(f, []);
  return out;
}

/** Resolves a field-set path to the value in obj; `found` false when absent. */
export function valueAt(obj: unknown, path: string): { found: boolean; value?: unknown } {
  let cur: unknown = obj;
  for (const seg of path.split(SEP)) {
    if (seg === '.') continue;
    if (seg.startsWith('f:')) {
      if (!isObject(cur) || !(seg.slice(2) in cur)) return { found: false };
      cur = cur[seg.slice(2)];
    } else if (seg.startsWith('k:')) {
      const want = JSON.parse(seg.slice(2)) as JsonObject;
      if (!Array.isArray(cur)) return { found: false };
      cur = cur.find(
        (it) => isObject(it) && Object.entries(want).every(([k, v]) => deepEqual(it[k], v)),
      );
      if (cur === undefined) return { found: false };
    } else if (seg.startsWith('v:')) {
      const want = JSON.parse(seg.slice(2)) as unknown;
      if (!Array.isArray(cur) || !cur.some((x) => deepEqual(x, want))) return { found: false };
      cur = want;
    }
  }
  return { found: true, value: cur };
}

/** Human path used in conflict messages: `.spec.containers[name="app"].image`. */
export function displayPath(path: string): string {
  let s = '';
  for (const seg of path.split(SEP)) {
    if (seg === '.') continue;
    if (seg.startsWith('f:')) s += `.${seg.slice(2)}`;
    else if (seg.startsWith('k:')) {
      const o = JSON.parse(seg.slice(2)) as JsonObject;
      s += `[${Object.entries(o)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (seg.startsWith('v:')) s += `[=${seg.slice(2)}]`;
  }
  return s;
}

function removePath(obj: unknown, path: string): void {
  const segs = path.split(SEP);
  const itemMarker = segs[segs.length - 1] === '.';
  const target = itemMarker ? segs.slice(0, -1) : segs;
  const last = target[target.length - 1];
  if (!last) return;
  const parent = valueAt(obj, target.slice(0, -1).join(SEP));
  if (!parent.found) return;
  const pv = parent.value;
  if (last.startsWith('f:') && isObject(pv)) delete pv[last.slice(2)];
  else if (last.startsWith('k:') && Array.isArray(pv)) {
    const want = JSON.parse(last.slice(2)) as JsonObject;
    const i = pv.findIndex(
      (it) => isObject(it) && Object.entries(want).every(([k, v]) => deepEqual(it[k], v)),
    );
    if (i >= 0) pv.splice(i, 1);
  } else if (last.startsWith('v:') && Array.isArray(pv)) {
    const want = JSON.parse(last.slice(2)) as unknown;
    const i = pv.findIndex((x) => deepEqual(x, want));
    if (i >= 0) pv.splice(i, 1);
  }
}

/** Merges an applied configuration into the live object with SSA list semantics. */
export function mergeApplied(live: unknown, applied: unknown, ref: TypeRef, root = false): unknown {
  if (Array.isArray(applied)) {
    const li = listInfo(ref);
    if (li.type === 'atomic' || !Array.isArray(live)) return clone(applied);
    if (li.type === 'set') {
      const out: unknown[] = [...(live as unknown[])];
      for (const a of applied) if (!out.some((x) => deepEqual(x, a))) out.push(clone(a));
      return out;
    }
    const out: unknown[] = [...(live as unknown[])];
    for (const a of applied) {
      const k = keyOf(a, li.keys);
      const i = out.findIndex((x) => keyOf(x, li.keys) === k);
      if (i >= 0) out[i] = mergeApplied(out[i], a, itemRef(ref));
      else out.push(clone(a));
    }
    return out;
  }
  if (isObject(applied) && isObject(live) && !atomicMap(ref)) {
    const out: JsonObject = { ...live };
    for (const [k, v] of Object.entries(applied))
      out[k] = mergeApplied(live[k], v, childRef(ref, k, root));
    return out;
  }
  return clone(applied);
}

export interface ManagerState {
  manager: string;
  operation: 'Apply' | 'Update';
  subresource?: string;
  apiVersion: string;
  time: string;
  set: FieldSet;
}

export function readManagers(obj: KubeObject): ManagerState[] {
  const mf = obj.metadata?.managedFields ?? [];
  return mf.map((e) => {
    const m: ManagerState = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      set: fromFieldsV1(e.fieldsV1),
    };
    if (e.subresource) m.subresource = e.subresource;
    return m;
  });
}

/**
 * In kube-apiserver's order (managedfields sortEncodedManagedFields): Apply before Update, then
 * by time (seconds), manager, apiVersion and subresource.
 */
export function writeManagers(managers: ManagerState[]): ManagedFieldsEntry[] {
  const order = (m: ManagerState): string[] => [
    m.operation,
    m.time,
    m.manager,
    m.apiVersion,
    m.subresource ?? '',
  ];
  return [...managers]
    .sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      const i = x.findIndex((v, n) => v !== y[n]);
      return i < 0 ? 0 : x[i]! < y[i]! ? -1 : 1;
    })
    .filter((m) => m.set.size > 0)
    .map((m) => {
      const e: ManagedFieldsEntry = {
        manager: m.manager,
        operation: m.operation,
        apiVersion: m.apiVersion,
        time: m.time,
        fieldsType: 'FieldsV1',
        fieldsV1: toFieldsV1(m.set),
      };
      if (m.subresource) e.subresource = m.subresource;
      return e;
    });
}

function sameManager(
  m: ManagerState,
  manager: string,
  op: string,
  sub: string | undefined,
): boolean {
  return m.manager === manager && m.operation === op && (m.subresource ?? '') === (sub ?? '');
}

/** Ownership after a non-apply write: changed fields move to the writer. */
export function updateOwnership(
  old: KubeObject | undefined,
  next: KubeObject,
  root: TypeRef,
  statusSplit: boolean,
  manager: string,
  apiVersion: string,
  subresource: string | undefined,
): ManagerState[] {
  const managers = old ? readManagers(old) : [];
  const scope: Scope = subresource === 'status' ? 'status' : 'main';
  const oldSet = old ? fieldSetOf(old, root, scope, statusSplit, true) : new Set<string>();
  const newSet = fieldSetOf(next, root, scope, statusSplit, true);
  const changed: string[] = [];
  for (const p of newSet) {
    if (!oldSet.has(p)) changed.push(p);
    else if (!p.endsWith('.') && !deepEqual(valueAt(old, p).value, valueAt(next, p).value))
      changed.push(p);
  }
  const removed = [...oldSet].filter((p) => !newSet.has(p));
  if (changed.length === 0 && removed.length === 0) return managers;
  for (const m of managers) {
    for (const p of changed) m.set.delete(p);
    for (const p of removed) m.set.delete(p);
  }
  let mine = managers.find((m) => sameManager(m, manager, 'Update', subresource));
  if (!mine) {
    mine = { manager, operation: 'Update', apiVersion, time: nowIso(), set: new Set() };
    if (subresource) mine.subresource = subresource;
    managers.push(mine);
  }
  for (const p of changed) mine.set.add(p);
  mine.time = nowIso();
  mine.apiVersion = apiVersion;
  return managers.filter((m) => m.set.size > 0);
}

export interface ApplyConflict {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  path: string;
}

export interface ApplyResult {
  object: KubeObject;
  managers: ManagerState[];
  conflicts: ApplyConflict[];
}

/** Server-side apply: conflicts, merge, removal of fields this manager stopped applying. */
export function apply(
  live: KubeObject | undefined,
  applied: KubeObject,
  root: TypeRef,
  statusSplit: boolean,
  manager: string,
  apiVersion: string,
  subresource: string | undefined,
  force: boolean,
): ApplyResult {
  const scope: Scope = subresource === 'status' ? 'status' : 'main';
  const managers = live ? readManagers(live) : [];
  const appliedSet = fieldSetOf(applied, root, scope, statusSplit);
  const conflicts: ApplyConflict[] = [];
  const base: KubeObject = live ? clone(live) : {};
  for (const m of managers) {
    if (sameManager(m, manager, 'Apply', subresource)) continue;
    for (const p of appliedSet) {
      if (!m.set.has(p) || p.endsWith('.')) continue;
      const lv = valueAt(base, p);
      const av = valueAt(applied, p);
      if (!lv.found || !deepEqual(lv.value, av.value))
        conflicts.push({
          manager: m.manager,
          operation: m.operation,
          apiVersion: m.apiVersion,
          path: p,
        });
    }
  }
  if (conflicts.length && !force) return { object: base, managers, conflicts: conflicts };
  if (force)
    for (const c of conflicts)
      for (const m of managers) if (m.manager === c.manager) m.set.delete(c.path);

  let mine = managers.find((m) => sameManager(m, manager, 'Apply', subresource));
  const previous = mine ? mine.set : new Set<string>();
  const merged = mergeApplied(base, applied, root, true) as KubeObject;
  const others = managers.filter((m) => m !== mine);
  const ownedByOthers = (p: string): boolean => {
    const prefix = p.endsWith('.') ? p.slice(0, -1) : `${p}${SEP}`;
    return others.some((m) => m.set.has(p) || [...m.set].some((q) => q.startsWith(prefix)));
  };
  // Whole list items first (outermost first): removing an item's key field first would leave
  // the item unfindable by its key, stripped but still there. Then fields, innermost first.
  const stale = [...previous]
    .filter((p) => !appliedSet.has(p))
    .sort((a, b) => {
      const itemA = a.endsWith(`${SEP}.`);
      const itemB = b.endsWith(`${SEP}.`);
      if (itemA !== itemB) return itemA ? -1 : 1;
      return itemA ? a.length - b.length : b.length - a.length;
    });
  for (const p of stale) {
    if (ownedByOthers(p)) continue;
    removePath(merged, p);
    // A map left empty by the removal goes too, as the real API server does (an SRE clearing
    // every tag override leaves no `tags: {}`, which a CRD's minProperties would refuse), unless
    // this apply sets it empty itself or another manager holds it.
    const segs = p.split(SEP).filter((x) => x !== '.');
    for (let n = segs.length - 1; n > 0; n--) {
      const parent = segs.slice(0, n).join(SEP);
      const pv = valueAt(merged, parent);
      if (!pv.found || !isObject(pv.value) || Object.keys(pv.value).length > 0) break;
      if (!segs[n - 1]!.startsWith('f:')) break;
      if (appliedSet.has(parent) || ownedByOthers(parent)) break;
      removePath(merged, parent);
    }
  }
  if (!mine) {
    mine = { manager, operation: 'Apply', apiVersion, time: nowIso(), set: appliedSet };
    if (subresource) mine.subresource = subresource;
    managers.push(mine);
  } else {
    mine.set = appliedSet;
    mine.time = nowIso();
    mine.apiVersion = apiVersion;
  }
  return { object: merged, managers: managers.filter((m) => m.set.size > 0), conflicts: [] };
}

import { ApiError } from './errors.js';
import { childRef, TypeRef } from './fieldset.js';
import { clone, deepEqual, isObject, JsonObject } from './util.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function invalidPatch(msg: string): ApiError {
  return new ApiError(422, 'Invalid', msg);
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/'))
    throw invalidPatch(
      `the server rejected our request due to an error in our request: invalid JSON pointer ${JSON.stringify(p)}`,
    );
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function container(doc: unknown, segs: string[], op: string, path: string): unknown {
  let cur = doc;
  for (const s of segs) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (isObject(cur)) cur = cur[s];
    else cur = undefined;
    if (cur === undefined)
      throw invalidPatch(
        `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${path}": missing value`,
      );
  }
  return cur;
}

/** RFC 6902. */
export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw new ApiError(
      400,
      'BadRequest',
      'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    );
  let root = clone(doc);
  for (const raw of ops) {
    if (!isObject(raw)) throw invalidPatch('invalid JSON patch operation');
    const op = String(raw.op);
    const path = typeof raw.path === 'string' ? raw.path : '';
    const segs = parsePointer(path);
    const get = (p: string): unknown => container(root, parsePointer(p), op, p);
    const set = (s: string[], value: unknown, insert: boolean): void => {
      if (s.length === 0) {
        root = value;
        return;
      }
      const parent = container(root, s.slice(0, -1), op, path);
      const last = s[s.length - 1]!;
      if (Array.isArray(parent)) {
        const i = last === '-' ? parent.length : Number(last);
        if (!Number.isInteger(i) || i < 0 || i > parent.length || (!insert && i >= parent.length))
          throw invalidPatch(
            `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${path}"`,
          );
        if (insert) parent.splice(i, 0, value);
        else parent[i] = value;
      } else if (isObject(parent)) {
        if (!insert && !(last in parent))
          throw invalidPatch(
            `the server rejected our request due to an error in our request: replace operation does not apply: doc is missing key: ${path}: missing value`,
          );
        parent[last] = value;
      } else
        throw invalidPatch(
          `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${path}"`,
        );
    };
    const remove = (s: string[], p: string): unknown => {
      const parent = container(root, s.slice(0, -1), op, p);
      const last = s[s.length - 1]!;
      if (Array.isArray(parent)) {
        const i = Number(last);
        if (!(i >= 0 && i < parent.length))
          throw invalidPatch(
            `the server rejected our request due to an error in our request: remove operation does not apply: doc is missing path: "${p}"`,
          );
        return parent.splice(i, 1)[0];
      }
      if (isObject(parent) && last in parent) {
        const v = parent[last];
        delete parent[last];
        return v;
      }
      throw invalidPatch(
        `the server rejected our request due to an error in our request: remove operation does not apply: doc is missing path: "${p}": missing value`,
      );
    };
    switch (op) {
      case 'add':
        set(segs, clone(raw.value), true);
        break;
      case 'replace':
        set(segs, clone(raw.value), false);
        break;
      case 'remove':
        remove(segs, path);
        break;
      case 'move': {
        const from = String(raw.from);
        const v = remove(parsePointer(from), from);
        set(segs, v, true);
        break;
      }
      case 'copy':
        set(segs, clone(get(String(raw.from))), true);
        break;
      case 'test':
        if (!deepEqual(get(path), raw.value))
          throw invalidPatch(
            `the server rejected our request due to an error in our request: testing value ${path} failed: test failed`,
          );
        break;
      default:
        throw invalidPatch(
          `the server rejected our request due to an error in our request: Unexpected kind: ${op}`,
        );
    }
  }
  return root;
}

/**
 * Strategic merge patch for core types: merge patch, except lists with a known merge key
 * are merged by key and `$patch: delete` / `$retainKeys` directives are honoured minimally.
 */
export function strategicMergePatch(
  target: unknown,
  patch: unknown,
  ref: TypeRef,
  root = true,
): unknown {
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return clone(rest);
  }
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    const cref = childRef(ref, k, root);
    if (Array.isArray(v) && Array.isArray(out[k])) {
      const keys = mergeKeyOf(cref);
      if (keys) {
        const list = [...(out[k] as unknown[])];
        for (const item of v) {
          if (!isObject(item)) continue;
          const i = list.findIndex(
            (x) => isObject(x) && keys.every((mk) => deepEqual(x[mk], item[mk])),
          );
          if (item.$patch === 'delete') {
            if (i >= 0) list.splice(i, 1);
          } else if (i >= 0)
            list[i] = strategicMergePatch(
              list[i],
              item,
              { builtin: true, name: k, parent: k },
              false,
            );
          else list.push(clone(item));
        }
        out[k] = list;
        continue;
      }
      if (k === 'finalizers') {
        const list = [...(out[k] as unknown[])];
        for (const item of v) if (!list.some((x) => deepEqual(x, item))) list.push(item);
        out[k] = list;
        continue;
      }
    }
    out[k] = strategicMergePatch(out[k], v, cref, false);
  }
  return out;
}

function mergeKeyOf(ref: TypeRef): string[] | undefined {
  switch (ref.name ?? '') {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'volumes':
    case 'env':
    case 'imagePullSecrets':
      return ['name'];
    case 'volumeMounts':
      return ['mountPath'];
    case 'ports':
      return ref.parent === 'containers' ? ['containerPort'] : ['port'];
    case 'conditions':
      return ['type'];
    case 'ownerReferences':
      return ['uid'];
    default:
      return undefined;
  }
}

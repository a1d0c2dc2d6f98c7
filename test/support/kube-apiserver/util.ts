import { randomBytes, randomUUID } from 'node:crypto';

import {
  clone,
  deepEqual,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  isObject,
  qualifiedNameErrors,
  type JsonObject,
} from '@fleet/crd-schema';
import { cause, StatusCause } from './errors.js';

export {
  clone,
  deepEqual,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  isObject,
  qualifiedNameErrors,
  type JsonObject,
};

export interface KubeObject extends JsonObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface ObjectMeta extends JsonObject {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: JsonObject[];
  managedFields?: ManagedFieldsEntry[];
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

export function nowIso(): string {
  // metav1.Time serialises with second precision.
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function newUid(): string {
  return randomUUID();
}

const ALNUM = 'bcdfghjklmnpqrstvwxz2456789';
export function randomSuffix(n = 5): string {
  const bytes = randomBytes(n);
  let s = '';
  for (const b of bytes) s += ALNUM[b % ALNUM.length];
  return s;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function labelValueErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(v))
    errs.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
  return errs;
}

/** path.IsValidPathSegmentName: RBAC object names such as `system:discovery`. */
function pathSegmentNameErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** ObjectMeta validation shared by every resource (ValidateObjectMeta). */
export function validateObjectMeta(
  meta: ObjectMeta,
  nameRule: 'subdomain' | 'label' | 'path',
): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = meta.name;
  if (!name) {
    causes.push(cause.required('metadata.name', 'name or generateName is required'));
  } else {
    const errs =
      nameRule === 'label'
        ? dns1123LabelErrors(name)
        : nameRule === 'path'
          ? pathSegmentNameErrors(name)
          : dns1123SubdomainErrors(name);
    for (const e of errs) causes.push(cause.invalid('metadata.name', name, e));
  }
  if (meta.labels !== undefined) {
    if (!isObject(meta.labels))
      causes.push(cause.invalid('metadata.labels', meta.labels, 'must be a map'));
    else
      for (const [k, v] of Object.entries(meta.labels)) {
        for (const e of qualifiedNameErrors(k)) causes.push(cause.invalid('metadata.labels', k, e));
        if (typeof v !== 'string')
          causes.push(cause.invalid(`metadata.labels`, v, 'must be a string'));
        else
          for (const e of labelValueErrors(v)) causes.push(cause.invalid('metadata.labels', v, e));
      }
  }
  if (meta.annotations !== undefined) {
    if (!isObject(meta.annotations))
      causes.push(cause.invalid('metadata.annotations', meta.annotations, 'must be a map'));
    else {
      let total = 0;
      for (const [k, v] of Object.entries(meta.annotations)) {
        for (const e of qualifiedNameErrors(k.toLowerCase()))
          causes.push(cause.invalid('metadata.annotations', k, e));
        if (typeof v !== 'string')
          causes.push(cause.invalid('metadata.annotations', v, 'must be a string'));
        total += k.length + String(v).length;
      }
      if (total > 256 * 1024) causes.push(cause.tooLong('metadata.annotations', 256 * 1024));
    }
  }
  if (meta.finalizers !== undefined) {
    if (!Array.isArray(meta.finalizers))
      causes.push(cause.invalid('metadata.finalizers', meta.finalizers, 'must be a list'));
    else
      meta.finalizers.forEach((f, i) => {
        if (typeof f !== 'string')
          causes.push(cause.invalid(`metadata.finalizers[${i}]`, f, 'must be a string'));
        else
          for (const e of qualifiedNameErrors(f))
            causes.push(cause.invalid(`metadata.finalizers[${i}]`, f, e));
      });
  }
  return causes;
}

/** JSON-pointer-ish segments to the field path format used in causes: `spec.a[0].b`. */
export function fieldPath(segs: (string | number)[]): string {
  let s = '';
  for (const seg of segs) {
    if (typeof seg === 'number') s += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg) || s === '') s += s ? `.${seg}` : seg;
    else s += `[${seg}]`;
  }
  return s;
}

/** Kubernetes version priority: GA > beta > alpha, higher numbers first, then lexical. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0, v];
    const stage = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
    return [stage, Number(m[1]), m[3] ? Number(m[3]) : 0, v];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa[0] === 0 && pb[0] === 0) return a.localeCompare(b);
  if (pa[0] !== pb[0]) return pb[0] === 0 ? -1 : pa[0] === 0 ? 1 : pb[0] - pa[0];
  if (pa[1] !== pb[1]) return pb[1] - pa[1];
  return pb[2] - pa[2];
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

import { badRequest } from './errors.js';
import type { ResourceDef } from './resources.js';
import { isObject, type JsonObject, type KubeObject } from './util.js';

// Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), which kubectl
// asks for on every `get`: CRDs print their additionalPrinterColumns (JSONPath), built-in kinds
// the columns kube-apiserver's printers give them, anything else Name and Created At.

export interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

interface Printer {
  columns: Column[];
  cells(o: KubeObject, now: number): unknown[];
}

const col = (
  name: string,
  type = 'string',
  description = '',
  priority = 0,
  format = '',
): Column => ({
  name,
  type,
  format,
  description,
  priority,
});
const NAME = col(
  'Name',
  'string',
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  0,
  'name',
);
const AGE = col(
  'Age',
  'string',
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
);

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 ? `${minutes}m${seconds % 60}s` : `${minutes}m`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 ? `${hours}h${minutes % 60}m` : `${hours}h`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 ? `${Math.floor(hours / 24)}d${hours % 24}h` : `${hours / 24}d`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days ? `${years}y${days}d` : `${years}y`;
  }
  return `${years}y`;
}

const age = (o: KubeObject, now: number): string => {
  const t = o.metadata?.creationTimestamp;
  return t ? humanDuration(now - Date.parse(t)) : '<unknown>';
};

const get = (o: unknown, ...path: string[]): unknown => {
  let cur = o;
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined;
  return cur;
};
const conditions = (o: KubeObject): JsonObject[] => {
  const c = get(o, 'status', 'conditions');
  return Array.isArray(c) ? (c as JsonObject[]) : [];
};
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

const BUILTIN: Record<string, Printer> = {
  '/Namespace': {
    columns: [NAME, col('Status'), AGE],
    cells: (o, now) => [o.metadata?.name, get(o, 'status', 'phase') ?? 'Active', age(o, now)],
  },
  '/ConfigMap': {
    columns: [
      NAME,
      col(
        'Data',
        'string',
        // k8s.io/api core/v1 ConfigMap.Data's doc, as printers.go describes the column.
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
      ),
      AGE,
    ],
    cells: (o, now) => [
      o.metadata?.name,
      Object.keys(isObject(o.data) ? o.data : {}).length +
        Object.keys(isObject(o.binaryData) ? o.binaryData : {}).length,
      age(o, now),
    ],
  },
  '/Secret': {
    columns: [NAME, col('Type'), col('Data', 'string'), AGE],
    cells: (o, now) => [
      o.metadata?.name,
      o.type ?? 'Opaque',
      Object.keys(isObject(o.data) ? o.data : {}).length,
      age(o, now),
    ],
  },
  '/ServiceAccount': {
    columns: [NAME, col('Secrets', 'string'), AGE],
    cells: (o, now) => [
      o.metadata?.name,
      Array.isArray(o.secrets) ? o.secrets.length : 0,
      age(o, now),
    ],
  },
  '/Node': {
    columns: [NAME, col('Status'), col('Roles'), AGE, col('Version')],
    cells: (o, now) => {
      const ready = conditions(o).find((c) => c.type === 'Ready');
      const roles = Object.keys(o.metadata?.labels ?? {})
        .filter((l) => l.startsWith('node-role.kubernetes.io/'))
        .map((l) => l.slice('node-role.kubernetes.io/'.length))
        .sort();
      const status = ready?.status === 'True' ? 'Ready' : 'NotReady';
      const unschedulable = get(o, 'spec', 'unschedulable') === true;
      return [
        o.metadata?.name,
        unschedulable ? `${status},SchedulingDisabled` : status,
        roles.length ? roles.join(',') : '<none>',
        age(o, now),
        get(o, 'status', 'nodeInfo', 'kubeletVersion') ?? '',
      ];
    },
  },
  '/Pod': {
    columns: [NAME, col('Ready'), col('Status'), col('Restarts', 'string'), AGE],
    cells: (o, now) => {
      const spec = get(o, 'spec', 'containers');
      const statuses = get(o, 'status', 'containerStatuses');
      const list = Array.isArray(statuses) ? (statuses as JsonObject[]) : [];
      return [
        o.metadata?.name,
        `${list.filter((s) => s.ready === true).length}/${Array.isArray(spec) ? spec.length : 0}`,
        o.metadata?.deletionTimestamp ? 'Terminating' : (get(o, 'status', 'phase') ?? 'Pending'),
        list.reduce((n, s) => n + num(s.restartCount), 0),
        age(o, now),
      ];
    },
  },
  'apps/Deployment': {
    columns: [NAME, col('Ready'), col('Up-to-date', 'string'), col('Available', 'string'), AGE],
    cells: (o, now) => [
      o.metadata?.name,
      `${num(get(o, 'status', 'readyReplicas'))}/${num(get(o, 'spec', 'replicas') ?? 1)}`,
      num(get(o, 'status', 'updatedReplicas')),
      num(get(o, 'status', 'availableReplicas')),
      age(o, now),
    ],
  },
  'certificates.k8s.io/CertificateSigningRequest': {
    columns: [
      NAME,
      AGE,
      col('SignerName'),
      col('Requestor'),
      col('RequestedDuration'),
      col('Condition'),
    ],
    cells: (o, now) => {
      const conds = conditions(o)
        .filter((c) => c.status === 'True' || c.status === undefined)
        .map((c) => String(c.type));
      const issued = typeof get(o, 'status', 'certificate') === 'string';
      const state = conds.length ? conds.join(',') : 'Pending';
      const seconds = get(o, 'spec', 'expirationSeconds');
      return [
        o.metadata?.name,
        age(o, now),
        get(o, 'spec', 'signerName') ?? '',
        get(o, 'spec', 'username') ?? '',
        typeof seconds === 'number' ? humanDuration(seconds * 1000) : '<none>',
        issued ? `${state},Issued` : state,
      ];
    },
  },
};

/** A JSONPath of the subset CRDs use: `.a.b`, `[0]`, `[*]`, `[?(@.type=="Ready")]`. */
export function jsonPath(o: unknown, path: string): unknown[] {
  const expr = path
    .trim()
    .replace(/^\{(.*)\}$/, '$1')
    .replace(/^\$/, '');
  const tokens = expr.match(/\.[^.[]+|\[[^\]]*\]/g);
  if (!tokens || tokens.join('') !== expr) throw badRequest(`unrecognized JSONPath ${path}`);
  let cur: unknown[] = [o];
  for (const t of tokens) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (t.startsWith('.')) {
        const key = t.slice(1);
        if (key === '*') {
          if (isObject(v)) next.push(...Object.values(v));
        } else if (isObject(v) && key in v) next.push(v[key]);
        continue;
      }
      const inner = t.slice(1, -1);
      if (!Array.isArray(v)) continue;
      if (inner === '*') next.push(...(v as unknown[]));
      else if (/^-?\d+$/.test(inner)) {
        const i = Number(inner);
        const item: unknown = (v as unknown[])[i < 0 ? v.length + i : i];
        if (item !== undefined) next.push(item);
      } else {
        const m = /^\?\(@\.([\w.-]+)\s*==\s*["']([^"']*)["']\)$/.exec(inner);
        if (!m) throw badRequest(`unrecognized JSONPath filter ${inner}`);
        for (const item of v as unknown[])
          if (String(get(item, ...m[1]!.split('.'))) === m[2]) next.push(item);
      }
    }
    cur = next;
  }
  return cur;
}

function crdPrinter(def: ResourceDef): Printer {
  const specified = def.printerColumns ?? [];
  const extra = specified.length
    ? specified.map((c) => ({
        column: col(
          String(c.name),
          typeof c.type === 'string' ? c.type : 'string',
          typeof c.description === 'string'
            ? c.description
            : `Custom resource definition column (in JSONPath format): ${String(c.jsonPath)}`,
          typeof c.priority === 'number' ? c.priority : 0,
          typeof c.format === 'string' ? c.format : '',
        ),
        path: String(c.jsonPath),
      }))
    : [{ column: AGE, path: '.metadata.creationTimestamp' }];
  return {
    columns: [NAME, ...extra.map((e) => e.column)],
    cells: (o, now) => [
      o.metadata?.name,
      ...extra.map(({ column, path }) => {
        const [v] = jsonPath(o, path);
        if (v === undefined || v === null) return null;
        // The apiextensions table convertor prints dates as ages, as kube's printers do.
        if (column.type === 'date' || column === AGE)
          return typeof v === 'string' ? humanDuration(now - Date.parse(v)) : null;
        if (column.type === 'integer' || column.type === 'number')
          return typeof v === 'number' ? v : null;
        if (column.type === 'boolean') return typeof v === 'boolean' ? v : null;
        return typeof v === 'string' ? v : JSON.stringify(v);
      }),
    ],
  };
}

const DEFAULT_PRINTER: Printer = {
  columns: [NAME, col('Created At', 'date', AGE.description)],
  cells: (o) => [o.metadata?.name, o.metadata?.creationTimestamp ?? null],
};

function printerFor(def: ResourceDef): Printer {
  if (def.custom) return crdPrinter(def);
  return BUILTIN[`${def.group}/${def.kind}`] ?? DEFAULT_PRINTER;
}

/** Whether an Accept header asks for a meta.k8s.io Table. */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

function rowObject(def: ResourceDef, o: KubeObject, include: string): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  return {
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: o.metadata,
  };
}

/** A Table of `objects`; `list` carries the list metadata (resourceVersion, continue). */
export function toTable(
  def: ResourceDef,
  objects: KubeObject[],
  listMeta: JsonObject,
  includeObject: string | null,
  noHeaders = false,
): JsonObject {
  const include = includeObject ?? 'Metadata';
  if (!['None', 'Metadata', 'Object'].includes(include))
    throw badRequest(
      `includeObject: Unsupported value: "${include}": supported values: "Metadata", "None", "Object"`,
    );
  const printer = printerFor(def);
  const now = Date.now();
  const table: JsonObject = {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    // A custom resource list's empty continue token is not a Table's.
    metadata: Object.fromEntries(
      Object.entries(listMeta).filter(([k, v]) => !(k === 'continue' && v === '')),
    ),
    columnDefinitions: noHeaders ? null : printer.columns,
    rows: objects.map((o) => {
      const row: JsonObject = { cells: printer.cells(o, now) };
      const obj = rowObject(def, o, include);
      if (obj !== undefined) row.object = obj;
      return row;
    }),
  };
  return table;
}

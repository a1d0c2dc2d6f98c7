import { cause, StatusCause } from './errors.js';
import { JSONSchemaProps, StructuralSchema } from '@fleet/crd-schema';
import {
  compareVersions,
  isObject,
  JsonObject,
  KubeObject,
  nowIso,
  qualifiedNameErrors,
} from './util.js';

export interface WriteContext {
  /** user the bearer token authenticates as */
  username: string;
  /** groups of that user (shows up in CSR spec.groups) */
  groups: string[];
  nextClusterIP(): string;
}

export interface ResourceDef {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** has a `/status` subresource */
  status: boolean;
  /** extra subresources (beyond status), e.g. `approval` for CSRs */
  subresources: string[];
  custom: boolean;
  /** metadata.generation is maintained */
  generation: boolean;
  nameRule: 'subdomain' | 'label' | 'path';
  /** PUT without metadata.resourceVersion is refused (CRs and CRDs) */
  requireResourceVersionOnUpdate: boolean;
  /** DELETE answers with the object instead of a Success Status */
  returnDeletedObject: boolean;
  schema?: StructuralSchema;
  /** reset/initialise status (and other server-owned fields) on create */
  prepareCreate?(obj: KubeObject, ctx: WriteContext): void;
  /** server-side defaults applied on every write */
  defaults?(obj: KubeObject): void;
  validate?(obj: KubeObject, old: KubeObject | undefined): StatusCause[];
  fieldSelectors?: Record<string, (o: KubeObject) => string | undefined>;
  /** verbs served (discovery); every verb when undefined */
  verbs?: string[];
  /** create-only review kinds answered by the server and never stored (access reviews) */
  review?: boolean;
  /** storage key: `group/plural` */
  readonly key: string;
  crdName?: string;
  /** A status write keeps the labels and annotations it asks for (Node, Pod, PodDisruptionBudget). */
  statusKeepsMetadata?: boolean;
  /** What the kind's strategy warns of on create (pkg/api/pod/warnings.go for pod templates). */
  warningsOnCreate?(obj: KubeObject): string[];
  /** No managedFields are kept (CertificateSigningRequest, as kube-apiserver answers it). */
  untrackedFields?: boolean;
  /** A deprecated CRD version's warning, sent with every request to it. */
  deprecationWarning?: string;
  /** a CRD version's additionalPrinterColumns (Table output) */
  printerColumns?: JsonObject[];
}

export const VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

type Partial2 = Omit<
  ResourceDef,
  | 'key'
  | 'singular'
  | 'listKind'
  | 'custom'
  | 'subresources'
  | 'nameRule'
  | 'requireResourceVersionOnUpdate'
  | 'returnDeletedObject'
  | 'generation'
  | 'status'
> &
  Partial<
    Pick<ResourceDef, 'subresources' | 'nameRule' | 'returnDeletedObject' | 'generation' | 'status'>
  >;

function builtin(d: Partial2): ResourceDef {
  return {
    singular: d.kind.toLowerCase(),
    listKind: `${d.kind}List`,
    custom: false,
    subresources: [],
    nameRule: 'subdomain',
    requireResourceVersionOnUpdate: false,
    returnDeletedObject: false,
    generation: false,
    status: false,
    ...d,
    key: `${d.group}/${d.plural}`,
  };
}

function get(o: unknown, ...path: string[]): unknown {
  let cur = o;
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined;
  return cur;
}

function obj(o: JsonObject, k: string): JsonObject {
  if (!isObject(o[k])) o[k] = {};
  return o[k] as JsonObject;
}

function validateContainers(spec: unknown, prefix: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const containers = get(spec, 'containers');
  if (!Array.isArray(containers) || containers.length === 0) {
    causes.push(cause.required(`${prefix}.containers`));
    return causes;
  }
  const names = new Set<string>();
  const declared = get(spec, 'volumes');
  const volumes = new Set(
    (Array.isArray(declared) ? declared : [])
      .map((v) => get(v, 'name'))
      .filter((n) => typeof n === 'string'),
  );
  containers.forEach((c, i) => {
    const name = get(c, 'name');
    if (typeof name !== 'string' || !name)
      causes.push(cause.required(`${prefix}.containers[${i}].name`));
    else if (names.has(name)) causes.push(cause.duplicate(`${prefix}.containers[${i}].name`, name));
    else names.add(name);
    const image = get(c, 'image');
    if (typeof image !== 'string' || !image)
      causes.push(cause.required(`${prefix}.containers[${i}].image`));
    const mounts = get(c, 'volumeMounts');
    (Array.isArray(mounts) ? mounts : []).forEach((m, j) => {
      const volume = get(m, 'name');
      if (typeof volume === 'string' && !volumes.has(volume))
        causes.push({
          reason: 'FieldValueNotFound',
          message: `Not found: ${JSON.stringify(volume)}`,
          field: `${prefix}.containers[${i}].volumeMounts[${j}].name`,
        });
    });
  });
  return causes;
}

function podSpecDefaults(spec: JsonObject): void {
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  for (const c of Array.isArray(spec.containers) ? spec.containers : []) {
    if (!isObject(c)) continue;
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.imagePullPolicy ??=
      typeof c.image === 'string' && (c.image.endsWith(':latest') || !c.image.includes(':'))
        ? 'Always'
        : 'IfNotPresent';
    c.resources ??= {};
    for (const p of Array.isArray(c.ports) ? c.ports : []) if (isObject(p)) p.protocol ??= 'TCP';
    for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
      if (!isObject(probe)) continue;
      probe.timeoutSeconds ??= 1;
      probe.periodSeconds ??= 10;
      probe.successThreshold ??= 1;
      probe.failureThreshold ??= 3;
      if (isObject(probe.httpGet)) probe.httpGet.scheme ??= 'HTTP';
    }
    for (const e of Array.isArray(c.env) ? c.env : []) {
      const fieldRef = get(e, 'valueFrom', 'fieldRef');
      if (isObject(fieldRef)) fieldRef.apiVersion ??= 'v1';
    }
  }
  // The deprecated alias is kept in step with serviceAccountName.
  if (typeof spec.serviceAccountName === 'string') spec.serviceAccount ??= spec.serviceAccountName;
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    if (!isObject(v)) continue;
    for (const source of ['secret', 'configMap', 'projected', 'downwardAPI'])
      if (isObject(v[source])) {
        const volumeSource = v[source];
        volumeSource.defaultMode ??= 0o644;
      }
  }
}

/** Node labels kube-apiserver warns of in a pod spec's nodeSelector, with what to use instead. */
const DEPRECATED_NODE_LABELS: Record<string, string> = {
  'node-role.kubernetes.io/master': 'node-role.kubernetes.io/control-plane',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};

function podSpecWarnings(spec: unknown, path: string): string[] {
  const selector = get(spec, 'nodeSelector');
  return Object.keys(isObject(selector) ? selector : {})
    .filter((k) => DEPRECATED_NODE_LABELS[k])
    .map(
      (k) => `${path}.nodeSelector[${k}]: use ${JSON.stringify(DEPRECATED_NODE_LABELS[k])} instead`,
    );
}

/** The built-in PriorityClasses' values (the Priority admission plugin resolves the name). */
const SYSTEM_PRIORITIES: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

/**
 * What kube-apiserver's admission plugins add to a new pod: Priority (the class's value and
 * preemption policy), DefaultTolerationSeconds (300 s for not-ready and unreachable) and
 * ServiceAccount (a projected `kube-api-access-*` token volume mounted in every container,
 * unless automounting is off).
 */
function podAdmission(spec: JsonObject): void {
  const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  spec.priority ??= SYSTEM_PRIORITIES[className] ?? 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as unknown[]) : [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'])
    if (
      !tolerations.some(
        (t) =>
          get(t, 'key') === key &&
          (get(t, 'effect') === 'NoExecute' || get(t, 'effect') === undefined),
      )
    )
      tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  spec.tolerations = tolerations;
  if (spec.automountServiceAccountToken === false) return;
  const name = `kube-api-access-${Math.random().toString(36).slice(2, 7).padEnd(5, '0')}`;
  spec.volumes = [
    ...(Array.isArray(spec.volumes) ? (spec.volumes as unknown[]) : []),
    {
      name,
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [
                {
                  path: 'namespace',
                  fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' },
                },
              ],
            },
          },
        ],
      },
    },
  ];
  for (const c of Array.isArray(spec.containers) ? spec.containers : [])
    if (isObject(c))
      c.volumeMounts = [
        ...(Array.isArray(c.volumeMounts) ? (c.volumeMounts as unknown[]) : []),
        { name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ];
}

/** Guaranteed, Burstable or BestEffort, from the containers' requests and limits. */
function qosClass(spec: JsonObject): string {
  const containers = Array.isArray(spec.containers) ? spec.containers : [];
  const resources = containers.map((c) => ({
    requests: (get(c, 'resources', 'requests') ?? {}) as JsonObject,
    limits: (get(c, 'resources', 'limits') ?? {}) as JsonObject,
  }));
  if (resources.every((r) => !Object.keys(r.requests).length && !Object.keys(r.limits).length))
    return 'BestEffort';
  const guaranteed = resources.every((r) =>
    ['cpu', 'memory'].every(
      (k) => r.limits[k] !== undefined && (r.requests[k] ?? r.limits[k]) === r.limits[k],
    ),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** admissionregistration/v1 defaults of a MatchResources. */
function matchResourcesDefaults(m: JsonObject): void {
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const rules of [m.resourceRules, m.excludeResourceRules])
    for (const r of Array.isArray(rules) ? rules : []) if (isObject(r)) r.scope ??= '*';
}

function selectorMatches(selector: unknown, labels: unknown): boolean {
  const ml = get(selector, 'matchLabels');
  const l = isObject(labels) ? labels : {};
  if (isObject(ml)) for (const [k, v] of Object.entries(ml)) if (l[k] !== v) return false;
  const me = get(selector, 'matchExpressions');
  if (Array.isArray(me))
    for (const e of me) {
      const key = String(get(e, 'key'));
      const values = (get(e, 'values') as string[] | undefined) ?? [];
      const op = get(e, 'operator');
      const has = key in l;
      if (op === 'In' && !(has && values.includes(String(l[key])))) return false;
      if (op === 'NotIn' && has && values.includes(String(l[key]))) return false;
      if (op === 'Exists' && !has) return false;
      if (op === 'DoesNotExist' && has) return false;
    }
  return true;
}

function validateRules(o: KubeObject): StatusCause[] {
  const rules = o.rules;
  const causes: StatusCause[] = [];
  if (rules === undefined || rules === null) return causes;
  if (!Array.isArray(rules)) return [cause.invalid('rules', rules, 'must be a list')];
  rules.forEach((r, i) => {
    const verbs = get(r, 'verbs');
    if (!Array.isArray(verbs) || verbs.length === 0)
      causes.push(cause.required(`rules[${i}].verbs`, 'verbs must contain at least one value'));
    const nonResource = get(r, 'nonResourceURLs');
    const resources = get(r, 'resources');
    if (!nonResource && (!Array.isArray(resources) || resources.length === 0))
      causes.push(
        cause.required(`rules[${i}].resources`, 'resource rules must supply at least one resource'),
      );
    if (!nonResource && !Array.isArray(get(r, 'apiGroups')))
      causes.push(
        cause.required(
          `rules[${i}].apiGroups`,
          'resource rules must supply at least one api group',
        ),
      );
  });
  return causes;
}

function validateBinding(
  o: KubeObject,
  old: KubeObject | undefined,
  namespaced: boolean,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const ref = o.roleRef;
  if (!isObject(ref)) return [cause.required('roleRef')];
  if (ref.apiGroup !== 'rbac.authorization.k8s.io')
    causes.push(
      cause.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', ['rbac.authorization.k8s.io']),
    );
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(String(ref.kind)))
    causes.push(cause.notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) causes.push(cause.required('roleRef.name'));
  if (old && JSON.stringify(old.roleRef) !== JSON.stringify(o.roleRef))
    causes.push(cause.invalid('roleRef', o.roleRef, 'cannot change roleRef'));
  const subjects = o.subjects;
  if (Array.isArray(subjects))
    subjects.forEach((s, i) => {
      const kind = get(s, 'kind');
      if (!['ServiceAccount', 'User', 'Group'].includes(String(kind)))
        causes.push(
          cause.notSupported(`subjects[${i}].kind`, kind ?? '', [
            'ServiceAccount',
            'User',
            'Group',
          ]),
        );
      if (!get(s, 'name')) causes.push(cause.required(`subjects[${i}].name`));
      if (kind === 'ServiceAccount' && !get(s, 'namespace') && !namespaced)
        causes.push(cause.required(`subjects[${i}].namespace`));
    });
  return causes;
}

const CSR_CONDITIONS = ['Approved', 'Denied', 'Failed'];

export function validateCsrStatus(o: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const conds = get(o, 'status', 'conditions');
  if (!Array.isArray(conds)) return causes;
  const seen = new Set<string>();
  conds.forEach((c, i) => {
    const t = String(get(c, 'type'));
    if (!t || t === 'undefined') causes.push(cause.required(`status.conditions[${i}].type`));
    if (seen.has(t) && CSR_CONDITIONS.includes(t))
      causes.push(cause.duplicate(`status.conditions[${i}].type`, t));
    seen.add(t);
    const st = get(c, 'status');
    if ((t === 'Approved' || t === 'Denied') && st !== 'True')
      causes.push(cause.notSupported(`status.conditions[${i}].status`, st ?? '', ['True']));
    else if (!['True', 'False', 'Unknown'].includes(String(st)))
      causes.push(
        cause.notSupported(`status.conditions[${i}].status`, st ?? '', [
          'False',
          'True',
          'Unknown',
        ]),
      );
  });
  if (seen.has('Approved') && seen.has('Denied'))
    causes.push(
      cause.invalid(
        'status.conditions',
        'Approved',
        'Approved and Denied conditions are mutually exclusive',
      ),
    );
  return causes;
}

/** group, version, kind, plural, namespaced */
export const READ_ONLY_KINDS: readonly [string, string, string, string, boolean][] = [
  ['', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true],
  ['', 'v1', 'PersistentVolume', 'persistentvolumes', false],
  ['', 'v1', 'PodTemplate', 'podtemplates', true],
  ['', 'v1', 'ReplicationController', 'replicationcontrollers', true],
  ['apps', 'v1', 'ReplicaSet', 'replicasets', true],
  ['apps', 'v1', 'StatefulSet', 'statefulsets', true],
  ['apps', 'v1', 'DaemonSet', 'daemonsets', true],
  ['storage.k8s.io', 'v1', 'CSINode', 'csinodes', false],
  ['storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false],
  ['storage.k8s.io', 'v1', 'VolumeAttachment', 'volumeattachments', false],
  ['resource.k8s.io', 'v1', 'DeviceClass', 'deviceclasses', false],
  ['resource.k8s.io', 'v1', 'ResourceClaim', 'resourceclaims', true],
  ['resource.k8s.io', 'v1', 'ResourceSlice', 'resourceslices', false],
];

export function builtinDefs(): ResourceDef[] {
  return [
    builtin({
      group: '',
      version: 'v1',
      kind: 'Namespace',
      plural: 'namespaces',
      namespaced: false,
      shortNames: ['ns'],
      status: true,
      subresources: ['finalize'],
      nameRule: 'label',
      returnDeletedObject: true,
      prepareCreate(o) {
        o.spec = { finalizers: ['kubernetes'], ...(isObject(o.spec) ? o.spec : {}) };
        o.status = { phase: 'Active' };
      },
      defaults(o) {
        const labels = (o.metadata!.labels ??= {});
        labels['kubernetes.io/metadata.name'] = o.metadata!.name ?? '';
      },
      fieldSelectors: { 'status.phase': (o) => get(o, 'status', 'phase') as string | undefined },
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'ServiceAccount',
      plural: 'serviceaccounts',
      namespaced: true,
      shortNames: ['sa'],
      // TokenRequest (create only), as kube-apiserver serves it.
      subresources: ['token'],
      returnDeletedObject: true,
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      namespaced: true,
      shortNames: ['cm'],
      validate(o) {
        const causes: StatusCause[] = [];
        for (const section of ['data', 'binaryData']) {
          const d = o[section];
          if (d === undefined || d === null) continue;
          if (!isObject(d)) {
            causes.push(cause.invalid(section, d, 'must be a map'));
            continue;
          }
          for (const [k, v] of Object.entries(d)) {
            if (!/^[-._a-zA-Z0-9]+$/.test(k))
              causes.push(
                cause.invalid(
                  `${section}[${k}]`,
                  k,
                  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                ),
              );
            if (typeof v !== 'string')
              causes.push(cause.invalid(`${section}[${k}]`, v, 'must be a string'));
          }
        }
        return causes;
      },
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      namespaced: true,
      defaults(o) {
        o.type ??= 'Opaque';
        if (isObject(o.stringData)) {
          const data = obj(o, 'data');
          for (const [k, v] of Object.entries(o.stringData))
            data[k] = Buffer.from(String(v)).toString('base64');
        }
        delete o.stringData;
      },
      validate(o) {
        const causes: StatusCause[] = [];
        if (isObject(o.data))
          for (const [k, v] of Object.entries(o.data)) {
            if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0)
              causes.push(
                cause.invalid(`data[${k}]`, '<secret contents redacted>', 'illegal base64 data'),
              );
          }
        return causes;
      },
      fieldSelectors: { type: (o) => o.type as string | undefined },
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'Node',
      plural: 'nodes',
      namespaced: false,
      shortNames: ['no'],
      status: true,
      statusKeepsMetadata: true,
      prepareCreate(o) {
        // The TaintNodesByCondition admission plugin: a new Node is not ready until it says so.
        const spec = obj(o, 'spec');
        const taints: unknown[] = Array.isArray(spec.taints) ? (spec.taints as unknown[]) : [];
        if (!taints.some((t) => get(t, 'key') === 'node.kubernetes.io/not-ready'))
          spec.taints = [...taints, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }];
        const status = obj(o, 'status');
        status.daemonEndpoints ??= { kubeletEndpoint: { Port: 0 } };
        status.nodeInfo = {
          architecture: '',
          bootID: '',
          containerRuntimeVersion: '',
          kernelVersion: '',
          kubeletVersion: '',
          kubeProxyVersion: '',
          machineID: '',
          operatingSystem: '',
          osImage: '',
          systemUUID: '',
          ...(isObject(status.nodeInfo) ? status.nodeInfo : {}),
        };
      },
      fieldSelectors: {
        'spec.unschedulable': (o) => String(get(o, 'spec', 'unschedulable') === true),
      },
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'Pod',
      plural: 'pods',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      status: true,
      statusKeepsMetadata: true,
      generation: true,
      subresources: ['eviction'],
      returnDeletedObject: true,
      warningsOnCreate: (o) => podSpecWarnings(get(o, 'spec'), 'spec'),
      prepareCreate(o) {
        const spec = obj(o, 'spec');
        podAdmission(spec);
        o.status = { phase: 'Pending', qosClass: qosClass(spec) };
      },
      defaults(o) {
        if (isObject(o.spec)) {
          podSpecDefaults(o.spec);
          o.spec.enableServiceLinks ??= true;
        }
      },
      validate: (o) => validateContainers(o.spec, 'spec'),
      fieldSelectors: {
        'spec.nodeName': (o) => (get(o, 'spec', 'nodeName') as string | undefined) ?? '',
        'spec.restartPolicy': (o) => get(o, 'spec', 'restartPolicy') as string | undefined,
        'spec.schedulerName': (o) => get(o, 'spec', 'schedulerName') as string | undefined,
        'spec.serviceAccountName': (o) =>
          get(o, 'spec', 'serviceAccountName') as string | undefined,
        'status.phase': (o) => get(o, 'status', 'phase') as string | undefined,
        'status.podIP': (o) => (get(o, 'status', 'podIP') as string | undefined) ?? '',
        'status.nominatedNodeName': (o) =>
          (get(o, 'status', 'nominatedNodeName') as string | undefined) ?? '',
      },
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'Service',
      plural: 'services',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
      prepareCreate(o, ctx) {
        const spec = obj(o, 'spec');
        spec.type ??= 'ClusterIP';
        if (spec.type !== 'ExternalName' && spec.clusterIP === undefined) {
          spec.clusterIP = ctx.nextClusterIP();
          spec.clusterIPs = [spec.clusterIP];
        }
        o.status = { loadBalancer: {} };
      },
      defaults(o) {
        const spec = obj(o, 'spec');
        spec.sessionAffinity ??= 'None';
        if (spec.type !== 'ExternalName') {
          spec.ipFamilies ??= ['IPv4'];
          spec.ipFamilyPolicy ??= 'SingleStack';
          spec.internalTrafficPolicy ??= 'Cluster';
        }
        for (const p of Array.isArray(spec.ports) ? spec.ports : [])
          if (isObject(p)) {
            p.protocol ??= 'TCP';
            p.targetPort ??= p.port;
          }
      },
      validate(o) {
        const causes: StatusCause[] = [];
        const ports = get(o, 'spec', 'ports');
        const type = get(o, 'spec', 'type');
        if (
          type !== 'ExternalName' &&
          get(o, 'spec', 'clusterIP') !== 'None' &&
          (!Array.isArray(ports) || ports.length === 0)
        )
          causes.push(cause.required('spec.ports'));
        if (!['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'].includes(String(type)))
          causes.push(
            cause.notSupported('spec.type', type, [
              'ClusterIP',
              'ExternalName',
              'LoadBalancer',
              'NodePort',
            ]),
          );
        if (Array.isArray(ports))
          ports.forEach((p, i) => {
            const port = get(p, 'port');
            if (typeof port !== 'number' || port < 1 || port > 65535)
              causes.push(
                cause.invalid(
                  `spec.ports[${i}].port`,
                  port ?? 0,
                  'must be between 1 and 65535, inclusive',
                ),
              );
          });
        return causes;
      },
    }),
    builtin({
      group: '',
      version: 'v1',
      kind: 'Event',
      plural: 'events',
      namespaced: true,
      shortNames: ['ev'],
      prepareCreate(o) {
        // Go zero values the real server serialises (time.Time and MicroTime as null); being in
        // the zero value, they are no manager's.
        for (const k of ['eventTime', 'firstTimestamp', 'lastTimestamp']) o[k] ??= null;
        o.reportingComponent ??= '';
        o.reportingInstance ??= '';
      },
      defaults(o) {
        o.type ??= 'Normal';
      },
      validate(o) {
        const causes: StatusCause[] = [];
        if (!isObject(o.involvedObject)) causes.push(cause.required('involvedObject'));
        if (!['Normal', 'Warning'].includes(String(o.type)))
          causes.push(cause.notSupported('type', o.type, ['Normal', 'Warning']));
        return causes;
      },
      fieldSelectors: {
        'involvedObject.kind': (o) =>
          (get(o, 'involvedObject', 'kind') as string | undefined) ?? '',
        'involvedObject.namespace': (o) =>
          (get(o, 'involvedObject', 'namespace') as string | undefined) ?? '',
        'involvedObject.name': (o) =>
          (get(o, 'involvedObject', 'name') as string | undefined) ?? '',
        'involvedObject.uid': (o) => (get(o, 'involvedObject', 'uid') as string | undefined) ?? '',
        'involvedObject.apiVersion': (o) =>
          (get(o, 'involvedObject', 'apiVersion') as string | undefined) ?? '',
        'involvedObject.resourceVersion': (o) =>
          (get(o, 'involvedObject', 'resourceVersion') as string | undefined) ?? '',
        'involvedObject.fieldPath': (o) =>
          (get(o, 'involvedObject', 'fieldPath') as string | undefined) ?? '',
        reason: (o) => (o.reason as string | undefined) ?? '',
        reportingComponent: (o) => (o.reportingComponent as string | undefined) ?? '',
        source: (o) => (get(o, 'source', 'component') as string | undefined) ?? '',
        type: (o) => (o.type as string | undefined) ?? '',
      },
    }),
    builtin({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      warningsOnCreate: (o) =>
        podSpecWarnings(get(o, 'spec', 'template', 'spec'), 'spec.template.spec'),
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      status: true,
      subresources: ['scale'],
      generation: true,
      prepareCreate(o) {
        o.status = {};
      },
      defaults(o) {
        const spec = obj(o, 'spec');
        spec.replicas ??= 1;
        spec.revisionHistoryLimit ??= 10;
        spec.progressDeadlineSeconds ??= 600;
        spec.strategy ??= {
          type: 'RollingUpdate',
          rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
        };
        const tspec = get(spec, 'template', 'spec');
        if (isObject(tspec)) podSpecDefaults(tspec);
      },
      validate(o, old) {
        const causes: StatusCause[] = [];
        const sel = get(o, 'spec', 'selector');
        if (!isObject(sel)) causes.push(cause.required('spec.selector'));
        else if (!selectorMatches(sel, get(o, 'spec', 'template', 'metadata', 'labels')))
          causes.push(
            cause.invalid(
              'spec.template.metadata.labels',
              get(o, 'spec', 'template', 'metadata', 'labels') ?? {},
              '`selector` does not match template `labels`',
            ),
          );
        if (old && JSON.stringify(get(old, 'spec', 'selector')) !== JSON.stringify(sel))
          causes.push(cause.invalid('spec.selector', sel, 'field is immutable'));
        const replicas = get(o, 'spec', 'replicas');
        if (typeof replicas === 'number' && replicas < 0)
          causes.push(
            cause.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'),
          );
        causes.push(
          ...validateContainers(get(o, 'spec', 'template', 'spec'), 'spec.template.spec'),
        );
        return causes;
      },
    }),
    builtin({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      kind: 'ClusterRole',
      nameRule: 'path',
      plural: 'clusterroles',
      namespaced: false,
      validate: validateRules,
    }),
    builtin({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      kind: 'Role',
      nameRule: 'path',
      plural: 'roles',
      namespaced: true,
      validate: validateRules,
    }),
    builtin({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      kind: 'ClusterRoleBinding',
      nameRule: 'path',
      plural: 'clusterrolebindings',
      namespaced: false,
      validate: (o, old) => validateBinding(o, old, false),
    }),
    builtin({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      kind: 'RoleBinding',
      nameRule: 'path',
      plural: 'rolebindings',
      namespaced: true,
      validate: (o, old) => validateBinding(o, old, true),
    }),
    builtin({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      kind: 'ValidatingAdmissionPolicy',
      plural: 'validatingadmissionpolicies',
      namespaced: false,
      status: true,
      generation: true,
      prepareCreate(o) {
        o.status = {};
      },
      defaults(o) {
        const spec = obj(o, 'spec');
        spec.failurePolicy ??= 'Fail';
        if (isObject(spec.matchConstraints)) matchResourcesDefaults(spec.matchConstraints);
      },
      validate: (o) =>
        Array.isArray(get(o, 'spec', 'validations')) || get(o, 'spec', 'auditAnnotations')
          ? []
          : [
              cause.required(
                'spec.validations',
                'validations or auditAnnotations must contain at least one item',
              ),
            ],
    }),
    builtin({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      plural: 'validatingadmissionpolicybindings',
      namespaced: false,
      generation: true,
      defaults(o) {
        const matchResources = get(o, 'spec', 'matchResources');
        if (isObject(matchResources)) matchResourcesDefaults(matchResources);
      },
      validate: (o) => {
        const causes: StatusCause[] = [];
        if (!get(o, 'spec', 'policyName')) causes.push(cause.required('spec.policyName'));
        const actions = get(o, 'spec', 'validationActions');
        if (!Array.isArray(actions) || actions.length === 0)
          causes.push(cause.required('spec.validationActions'));
        else
          for (const [i, v] of actions.entries())
            if (!['Deny', 'Warn', 'Audit'].includes(String(v)))
              causes.push(
                cause.notSupported(`spec.validationActions[${i}]`, v, ['Audit', 'Deny', 'Warn']),
              );
        return causes;
      },
    }),
    builtin({
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'SelfSubjectReview',
      plural: 'selfsubjectreviews',
      namespaced: false,
      verbs: ['create'],
      review: true,
    }),
    builtin({
      group: 'authorization.k8s.io',
      version: 'v1',
      kind: 'SelfSubjectAccessReview',
      plural: 'selfsubjectaccessreviews',
      namespaced: false,
      verbs: ['create'],
      review: true,
    }),
    builtin({
      group: 'authorization.k8s.io',
      version: 'v1',
      kind: 'SelfSubjectRulesReview',
      plural: 'selfsubjectrulesreviews',
      namespaced: false,
      verbs: ['create'],
      review: true,
    }),
    builtin({
      group: 'authorization.k8s.io',
      version: 'v1',
      kind: 'SubjectAccessReview',
      plural: 'subjectaccessreviews',
      namespaced: false,
      verbs: ['create'],
      review: true,
    }),
    builtin({
      group: 'authorization.k8s.io',
      version: 'v1',
      kind: 'LocalSubjectAccessReview',
      plural: 'localsubjectaccessreviews',
      namespaced: true,
      verbs: ['create'],
      review: true,
    }),
    builtin({
      group: 'certificates.k8s.io',
      version: 'v1',
      kind: 'CertificateSigningRequest',
      untrackedFields: true,
      plural: 'certificatesigningrequests',
      namespaced: false,
      shortNames: ['csr'],
      status: true,
      subresources: ['approval'],
      prepareCreate(o, ctx) {
        const spec = obj(o, 'spec');
        spec.username = ctx.username;
        spec.groups = [...ctx.groups];
        delete spec.uid;
        o.status = {};
      },
      defaults(o) {
        const spec = obj(o, 'spec');
        spec.usages ??= ['digital signature', 'key encipherment'];
        const conds = get(o, 'status', 'conditions');
        if (Array.isArray(conds))
          for (const c of conds)
            if (isObject(c)) {
              c.lastUpdateTime ??= nowIso();
              c.lastTransitionTime ??= c.lastUpdateTime;
            }
      },
      validate(o, old) {
        const causes: StatusCause[] = [];
        const req = get(o, 'spec', 'request');
        if (typeof req !== 'string' || !req) causes.push(cause.required('spec.request'));
        else {
          const pem = Buffer.from(req, 'base64').toString('utf8');
          if (!pem.includes('-----BEGIN CERTIFICATE REQUEST-----'))
            causes.push(
              cause.invalid('spec.request', '', 'PEM block type must be CERTIFICATE REQUEST'),
            );
        }
        const signer = get(o, 'spec', 'signerName');
        if (typeof signer !== 'string' || !signer) causes.push(cause.required('spec.signerName'));
        else
          for (const e of qualifiedNameErrors(
            signer.split('/')[0]!.includes('.') ? signer : `x/${signer}`,
          ).slice(0, 1))
            causes.push(cause.invalid('spec.signerName', signer, e));
        const usages = get(o, 'spec', 'usages');
        if (!Array.isArray(usages) || usages.length === 0)
          causes.push(cause.required('spec.usages'));
        if (old && JSON.stringify(get(old, 'spec')) !== JSON.stringify(get(o, 'spec')))
          causes.push(cause.invalid('spec', '', 'field is immutable'));
        causes.push(...validateCsrStatus(o));
        return causes;
      },
      fieldSelectors: {
        'spec.signerName': (o) => get(o, 'spec', 'signerName') as string | undefined,
      },
    }),
    builtin({
      group: 'policy',
      version: 'v1',
      kind: 'PodDisruptionBudget',
      plural: 'poddisruptionbudgets',
      namespaced: true,
      shortNames: ['pdb'],
      status: true,
      statusKeepsMetadata: true,
      generation: true,
      prepareCreate(o) {
        o.status = { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 };
      },
      validate(o) {
        const causes: StatusCause[] = [];
        const spec = get(o, 'spec');
        if (isObject(spec) && spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
          causes.push(
            cause.invalid('spec', '', 'minAvailable and maxUnavailable cannot be both set'),
          );
        return causes;
      },
    }),
    // Kinds only Karpenter reads (its scheduling simulation): served for get, list and watch,
    // so a read answers as the real server does; the product's roles grant no write on them
    // (test/real-kubernetes/differential-coverage.spec.ts), so writes are refused.
    ...READ_ONLY_KINDS.map(([group, version, kind, plural, namespaced]) =>
      builtin({ group, version, kind, plural, namespaced, verbs: ['get', 'list', 'watch'] }),
    ),
    builtin({
      group: 'coordination.k8s.io',
      version: 'v1',
      kind: 'Lease',
      plural: 'leases',
      namespaced: true,
    }),
    builtin({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      kind: 'CustomResourceDefinition',
      plural: 'customresourcedefinitions',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      status: true,
      generation: true,
      returnDeletedObject: true,
      prepareCreate(o) {
        // As the create answers, before the names are accepted and the CRD established.
        const versions = get(o, 'spec', 'versions');
        o.status = {
          acceptedNames: { kind: '', plural: '' },
          conditions: null,
          storedVersions: (Array.isArray(versions) ? versions : [])
            .filter((v) => get(v, 'storage') === true)
            .map((v) => String(get(v, 'name'))),
        };
      },
      defaults(o) {
        const spec = obj(o, 'spec');
        spec.conversion ??= { strategy: 'None' };
        const names = obj(spec, 'names');
        if (typeof names.kind === 'string') names.listKind ??= `${names.kind}List`;
        if (typeof names.kind === 'string') names.singular ??= names.kind.toLowerCase();
      },
      validate: validateCrd,
    }),
  ];
}

function validateCrd(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = isObject(o.spec) ? o.spec : {};
  const group = spec.group;
  const names = isObject(spec.names) ? spec.names : {};
  if (typeof group !== 'string' || !group) causes.push(cause.required('spec.group'));
  else if (!group.includes('.'))
    causes.push(cause.invalid('spec.group', group, 'should be a domain with at least one dot'));
  if (!names.plural) causes.push(cause.required('spec.names.plural'));
  if (!names.kind) causes.push(cause.required('spec.names.kind'));
  if (names.plural && group && o.metadata?.name !== `${names.plural as string}.${group as string}`)
    causes.push(
      cause.invalid('metadata.name', o.metadata?.name, 'must be spec.names.plural+"."+spec.group'),
    );
  if (!['Namespaced', 'Cluster'].includes(String(spec.scope)))
    causes.push(cause.notSupported('spec.scope', spec.scope ?? '', ['Cluster', 'Namespaced']));
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0)
    causes.push(
      cause.required('spec.versions', 'must have exactly one version marked as storage version'),
    );
  else {
    const storage = versions.filter((v) => get(v, 'storage') === true).length;
    if (storage !== 1)
      causes.push(
        cause.invalid(
          'spec.versions',
          versions.length,
          'must have exactly one version marked as storage version',
        ),
      );
    versions.forEach((v, i) => {
      if (!get(v, 'name')) causes.push(cause.required(`spec.versions[${i}].name`));
      if (typeof get(v, 'served') !== 'boolean')
        causes.push(cause.required(`spec.versions[${i}].served`));
      if (!isObject(get(v, 'schema', 'openAPIV3Schema')))
        causes.push(
          cause.required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'),
        );
    });
  }
  if (old) {
    if (get(old, 'spec', 'group') !== group)
      causes.push(cause.invalid('spec.group', group, 'field is immutable'));
    if (get(old, 'spec', 'names', 'plural') !== names.plural)
      causes.push(cause.invalid('spec.names.plural', names.plural, 'field is immutable'));
  }
  return causes;
}

/** Resource definitions served by a CRD, one per served version. */
export function defsFromCrd(crd: KubeObject): ResourceDef[] {
  const spec = crd.spec as JsonObject;
  const names = spec.names as JsonObject;
  const group = String(spec.group);
  const plural = String(names.plural);
  const out: ResourceDef[] = [];
  const versions = (spec.versions as JsonObject[]).filter((v) => v.served === true);
  versions.sort((a, b) => compareVersions(String(a.name), String(b.name)));
  for (const v of versions) {
    const schema = get(v, 'schema', 'openAPIV3Schema') as JSONSchemaProps | undefined;
    const def: ResourceDef = {
      group,
      version: String(v.name),
      kind: String(names.kind),
      plural,
      singular:
        typeof names.singular === 'string' ? names.singular : String(names.kind).toLowerCase(),
      listKind: typeof names.listKind === 'string' ? names.listKind : `${String(names.kind)}List`,
      namespaced: spec.scope === 'Namespaced',
      status: isObject(get(v, 'subresources', 'status')),
      subresources: isObject(get(v, 'subresources', 'scale')) ? ['scale'] : [],
      custom: true,
      generation: true,
      nameRule: 'subdomain',
      requireResourceVersionOnUpdate: true,
      returnDeletedObject: false,
      key: `${group}/${plural}`,
      crdName: crd.metadata?.name ?? '',
    };
    if (Array.isArray(names.shortNames)) def.shortNames = names.shortNames as string[];
    if (Array.isArray(names.categories)) def.categories = names.categories as string[];
    if (schema) def.schema = new StructuralSchema(schema, `${plural}.${group}/${def.version}`);
    if (Array.isArray(v.additionalPrinterColumns))
      def.printerColumns = v.additionalPrinterColumns as JsonObject[];
    if (v.deprecated === true) {
      // As apiextensions-apiserver words it: the served version it would suggest is the one of
      // highest priority that is not deprecated.
      const suggested = versions
        .filter((o) => o.deprecated !== true)
        .map((o) => String(o.name))
        .sort(compareVersions)[0];
      def.deprecationWarning =
        typeof v.deprecationWarning === 'string'
          ? v.deprecationWarning
          : `${group}/${def.version} ${def.kind} is deprecated` +
            (suggested ? `; use ${group}/${suggested} ${def.kind}` : '');
    }
    out.push(def);
  }
  return out;
}

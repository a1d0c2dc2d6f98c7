import type { Answer, DifferentialScript } from '../support/control-plane/differential.js';

// Requests beyond create-read-update-delete: watches (a resourceVersion too old, initial events
// closed by a bookmark), Table output as kubectl asks for it, CRD writes, eviction, verbs a
// subresource does not serve, and groups these servers do not serve at all.

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

const labelledConfigMap = (name: string, label: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { watched: label } },
  data: { a: '1' },
});

const established = (a: Answer) =>
  (
    (a.body as { status?: { conditions?: { type: string; status: string }[] } }).status
      ?.conditions ?? []
  ).some((c) => c.type === 'Established' && c.status === 'True');

const ownedSecret = (name: string, owner: number) => (earlier: readonly Answer[]) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name,
    ownerReferences: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: (earlier[owner]!.body as { metadata: { name: string } }).metadata.name,
        uid: (earlier[owner]!.body as { metadata: { uid: string } }).metadata.uid,
      },
    ],
  },
  stringData: { a: '1' },
});

const cascade = (policy: 'Background' | 'Foreground' | 'Orphan'): DifferentialScript => {
  const owner = `owner-${policy.toLowerCase()}`;
  const dependent = `dependent-${policy.toLowerCase()}`;
  const secret = `/api/v1/namespaces/default/secrets/${dependent}`;
  return {
    name: `cascading deletion: ${policy}`,
    steps: [
      {
        method: 'POST',
        path: CONFIGMAPS,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: owner } },
        expect: 201,
      },
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/secrets',
        body: ownedSecret(dependent, 0),
        expect: 201,
      },
      {
        method: 'DELETE',
        path: `${CONFIGMAPS}/${owner}`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: policy },
        expect: 200,
      },
      // The garbage collector's work: the dependent goes, or stays without its owner.
      policy === 'Orphan'
        ? {
            method: 'GET',
            path: secret,
            until: (a) =>
              !(a.body as { metadata?: { ownerReferences?: unknown[] } }).metadata?.ownerReferences,
          }
        : { method: 'GET', path: secret, until: 404 },
      { method: 'GET', path: `${CONFIGMAPS}/${owner}`, until: 404 },
    ],
  };
};

export const API_SCRIPTS: DifferentialScript[] = [
  cascade('Background'),
  cascade('Foreground'),
  cascade('Orphan'),
  {
    name: 'watch: a resourceVersion compacted away is 410 Gone',
    steps: [
      { method: 'POST', path: CONFIGMAPS, body: labelledConfigMap('compacted-a', 'compacted') },
      { method: 'POST', path: CONFIGMAPS, body: labelledConfigMap('compacted-b', 'compacted') },
      { compact: true },
      {
        method: 'GET',
        path: `${CONFIGMAPS}?watch=1&labelSelector=watched%3Dcompacted&resourceVersion={resourceVersion:0}`,
        events: 1,
      },
    ],
  },
  {
    name: 'watch: initial events, then a bookmark ending them, then what follows',
    steps: [
      { method: 'POST', path: CONFIGMAPS, body: labelledConfigMap('watched-a', 'initial') },
      { method: 'POST', path: CONFIGMAPS, body: labelledConfigMap('watched-b', 'initial') },
      {
        method: 'GET',
        path: `${CONFIGMAPS}?watch=1&labelSelector=watched%3Dinitial&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
        events: 3,
      },
    ],
  },
  {
    name: 'Table output of a built-in kind and of a custom resource, as kubectl get asks',
    steps: [
      { method: 'POST', path: CONFIGMAPS, body: labelledConfigMap('tabled', 'table') },
      { method: 'GET', path: `${CONFIGMAPS}?labelSelector=watched%3Dtable`, accept: TABLE },
      {
        method: 'POST',
        path: '/apis/karpenter.sh/v1/nodepools',
        body: {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodePool',
          metadata: { name: 'tabled', labels: { watched: 'table' } },
          spec: {
            template: {
              spec: {
                requirements: [],
                nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              },
            },
          },
        },
        expect: 201,
      },
      {
        method: 'GET',
        path: '/apis/karpenter.sh/v1/nodepools?labelSelector=watched%3Dtable',
        accept: TABLE,
      },
    ],
  },
  {
    name: 'CRD writes: create, wait for Established, patch, delete',
    steps: [
      {
        method: 'POST',
        path: CRDS,
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'widgets.example.com' },
          spec: {
            group: 'example.com',
            names: {
              kind: 'Widget',
              plural: 'widgets',
              singular: 'widget',
              listKind: 'WidgetList',
            },
            scope: 'Cluster',
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: {
                  openAPIV3Schema: {
                    type: 'object',
                    properties: {
                      spec: { type: 'object', properties: { size: { type: 'integer' } } },
                    },
                  },
                },
              },
            ],
          },
        },
        expect: 201,
      },
      { method: 'GET', path: `${CRDS}/widgets.example.com`, until: established },
      {
        method: 'PATCH',
        path: `${CRDS}/widgets.example.com`,
        body: { metadata: { labels: { patched: 'yes' } } },
        contentType: 'application/merge-patch+json',
        expect: 200,
      },
      { method: 'DELETE', path: `${CRDS}/widgets.example.com`, expect: 200 },
    ],
  },
  {
    name: 'eviction: a pod that is not running is evicted whatever its budget',
    steps: [
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/pods',
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'evicted', labels: { app: 'evicted' } },
          spec: {
            serviceAccountName: 'robot',
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
          },
        },
        expect: 201,
      },
      {
        method: 'POST',
        path: '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
        body: {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'evicted' },
          spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'evicted' } } },
        },
        expect: 201,
      },
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/pods/evicted/eviction',
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted' } },
        expect: 201,
      },
      { method: 'GET', path: '/api/v1/namespaces/default/pods/evicted', until: 404 },
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/pods/absent/eviction',
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'absent' } },
      },
    ],
  },
  {
    name: 'a status subresource serves get, update and patch only',
    steps: [
      {
        method: 'POST',
        path: '/apis/karpenter.sh/v1/nodeclaims/differential-status/status',
        body: {},
      },
      { method: 'DELETE', path: '/apis/karpenter.sh/v1/nodeclaims/differential-status/status' },
    ],
  },
  {
    name: 'groups and kinds these servers do not serve',
    steps: [
      {
        method: 'POST',
        path: '/apis/autoscaling.openshift.io/v1/karpenters',
        body: {
          apiVersion: 'autoscaling.openshift.io/v1',
          kind: 'Karpenter',
          metadata: { name: 'cluster' },
        },
      },
      {
        method: 'PATCH',
        path: '/apis/autoscaling.openshift.io/v1/karpenters/cluster',
        body: {},
        contentType: 'application/merge-patch+json',
      },
      { method: 'DELETE', path: '/apis/autoscaling.openshift.io/v1/karpenters/cluster' },
      ...[
        'autoscaling.x-k8s.io/v1alpha1/namespaces/default/capacitybuffers',
        'karpenter.sh/v1alpha1/nodeoverlays',
      ].flatMap((collection) => [
        { method: 'GET', path: `/apis/${collection}/absent/status` },
        {
          method: 'PATCH',
          path: `/apis/${collection}/absent/status`,
          body: {},
          contentType: 'application/merge-patch+json',
        },
        { method: 'PUT', path: `/apis/${collection}/absent/status`, body: {} },
      ]),
    ],
  },
];

import type { DifferentialScript } from '../support/control-plane/differential.js';
import { API_SCRIPTS } from './differential-api-scripts.js';
import { AUTHORIZATION_SCRIPTS } from './differential-authorization-scripts.js';
import { nodePoolSample, RESOURCE_SCRIPTS } from './differential-resource-scripts.js';

// Request scripts run against the emulated and the real kube-apiserver
// (differential.real-spec.ts). Each uses names of its own, so the scripts are independent.

const NODEPOOLS = '/apis/karpenter.sh/v1/nodepools';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const APPLY = 'application/apply-patch+yaml';

const nodePool = nodePoolSample;

const HANDWRITTEN_SCRIPTS: DifferentialScript[] = [
  {
    name: 'CRD validation: defaults filled in on create',
    steps: [
      { method: 'POST', path: NODEPOOLS, body: nodePool('defaults') },
      { method: 'GET', path: `${NODEPOOLS}/defaults` },
    ],
  },
  {
    name: 'CRD validation: blocking schema errors skip CEL; a pattern error does not; a CEL rule refuses',
    steps: [
      {
        method: 'POST',
        path: NODEPOOLS,
        body: nodePool('bad-operator', {
          template: {
            spec: {
              requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'Maybe', values: [] }],
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            },
          },
        }),
      },
      {
        method: 'POST',
        path: NODEPOOLS,
        body: nodePool('bad-budget', { disruption: { budgets: [{ nodes: '200%' }] } }),
      },
      {
        method: 'POST',
        path: NODEPOOLS,
        body: nodePool('restricted-label', {
          template: {
            spec: {
              requirements: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] }],
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            },
          },
        }),
      },
    ],
  },
  {
    name: 'server-side apply: a conflict, then force, and the managers recorded',
    steps: [
      {
        method: 'PATCH',
        path: `${NODEPOOLS}/applied?fieldManager=first`,
        body: nodePool('applied', { limits: { cpu: '10' } }),
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${NODEPOOLS}/applied?fieldManager=second`,
        body: nodePool('applied', { limits: { cpu: '20' } }),
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${NODEPOOLS}/applied?fieldManager=second&force=true`,
        body: nodePool('applied', { limits: { cpu: '20' } }),
        contentType: APPLY,
      },
    ],
  },
  {
    name: 'server-side apply: a map its manager stops applying is removed, not left empty',
    steps: [
      {
        method: 'PATCH',
        path: `${CONFIGMAPS}/emptied?fieldManager=applier`,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'emptied', labels: { a: '1' } },
          data: { a: '1', b: '2' },
        },
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${CONFIGMAPS}/emptied?fieldManager=applier`,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'emptied' } },
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${NODEPOOLS}/emptied?fieldManager=applier`,
        body: nodePool('emptied', { limits: { cpu: '10', memory: '10Gi' } }),
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${NODEPOOLS}/emptied?fieldManager=applier`,
        body: nodePool('emptied'),
        contentType: APPLY,
      },
    ],
  },
  {
    name: 'dryRun=All: answered as a create, nothing stored',
    steps: [
      { method: 'POST', path: `${NODEPOOLS}?dryRun=All`, body: nodePool('dry') },
      { method: 'GET', path: `${NODEPOOLS}/dry` },
    ],
  },
  {
    name: 'RBAC refusals and their messages',
    steps: [
      { as: 'bob', method: 'GET', path: '/api/v1/namespaces/default/pods' },
      { as: 'bob', method: 'GET', path: NODEPOOLS },
      { as: 'bob', method: 'DELETE', path: '/api/v1/nodes/some-node' },
    ],
  },
  {
    name: 'SelfSubjectReview and SelfSubjectAccessReview',
    steps: [
      {
        as: 'bob',
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      },
      {
        as: 'bob',
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } },
        },
      },
    ],
  },
  {
    name: 'finalizers: a delete marks, removing the finalizer deletes',
    steps: [
      {
        method: 'POST',
        path: CONFIGMAPS,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'held', finalizers: ['example.com/hold'] },
          data: { a: '1' },
        },
      },
      { method: 'DELETE', path: `${CONFIGMAPS}/held` },
      {
        method: 'PATCH',
        path: `${CONFIGMAPS}/held`,
        body: { metadata: { finalizers: null } },
        contentType: 'application/merge-patch+json',
      },
      { method: 'GET', path: `${CONFIGMAPS}/held` },
    ],
  },
  {
    name: 'generateName and a name conflict',
    steps: [
      {
        method: 'POST',
        path: CONFIGMAPS,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } },
      },
      {
        method: 'POST',
        path: CONFIGMAPS,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'twice' } },
      },
      {
        method: 'POST',
        path: CONFIGMAPS,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'twice' } },
      },
    ],
  },
  {
    name: 'TokenRequest for a service account',
    steps: [
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/serviceaccounts',
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } },
      },
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/serviceaccounts/robot/token',
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        },
      },
      {
        method: 'POST',
        path: '/api/v1/namespaces/default/serviceaccounts/nobody/token',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
      },
    ],
  },
  {
    name: "OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs the owner's finalizers",
    steps: [
      {
        method: 'POST',
        path: '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles',
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'configmap-writer' },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }],
        },
      },
      {
        method: 'POST',
        path: '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings',
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'bob-configmap-writer' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name: 'configmap-writer',
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
        },
      },
      { as: 'bob', method: 'GET', path: `${CONFIGMAPS}/absent`, until: 404 },
      {
        as: 'bob',
        method: 'POST',
        path: CONFIGMAPS,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: 'owned',
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name: 'owner',
                uid: '4a1b2c3d-0000-4000-8000-000000000001',
                blockOwnerDeletion: true,
              },
            ],
          },
        },
      },
      {
        as: 'bob',
        method: 'POST',
        path: CONFIGMAPS,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: 'owned-loosely',
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name: 'owner',
                uid: '4a1b2c3d-0000-4000-8000-000000000001',
              },
            ],
          },
        },
      },
    ],
  },
];

export const DIFFERENTIAL_SCRIPTS: DifferentialScript[] = [
  // In this order: later scripts use the ServiceAccount the TokenRequest script creates.
  ...HANDWRITTEN_SCRIPTS,
  ...AUTHORIZATION_SCRIPTS,
  ...API_SCRIPTS,
  ...RESOURCE_SCRIPTS,
];

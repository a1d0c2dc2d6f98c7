import { kubeletCsrRequest } from '@fleet/testing';

import { nodeClaimSample } from './differential-resource-scripts.js';

import type {
  Answer,
  DifferentialScript,
  DifferentialStep,
} from '../support/control-plane/differential.js';

// What the API server authorizes beyond a request's own verb and resource, run by users with
// exactly the rights each step needs: RBAC's escalation checks (bind, escalate), the
// OwnerReferencesPermissionEnforcement admission plugin (update on the owner's finalizers), a
// CSR approval (approve on its signer) and ValidatingAdmissionPolicies that deny and warn.

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

const clusterRole = (name: string, rules: unknown[]): DifferentialStep => ({
  method: 'POST',
  path: `${RBAC}/clusterroles`,
  body: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules,
  },
});

const bindClusterRole = (name: string, user: string): DifferentialStep => ({
  method: 'POST',
  path: `${RBAC}/clusterrolebindings`,
  body: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  },
});

const SECRET_READER_RULES = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];

const roleBinding = (name: string, roleKind: 'Role' | 'ClusterRole', role: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name, namespace: 'default' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: role },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dave' }],
});

const nodeClaim = (name: string, owner: object) =>
  nodeClaimSample(name, { ownerReferences: [owner] });

const OWNER_UID = '4a1b2c3d-0000-4000-8000-000000000002';

/** A NodePool as a NodeClaim's blocking owner, as Karpenter's nodeclaimtemplate.go sets it. */
const POOL_OWNER = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  name: 'owner-pool',
  uid: OWNER_UID,
  blockOwnerDeletion: true,
};

const csrApproval = (earlier: readonly Answer[], step: number) => {
  const csr = structuredClone(earlier[step]!.body) as { status?: Record<string, unknown> };
  csr.status = {
    conditions: [
      {
        type: 'Approved',
        status: 'True',
        reason: 'NodeIdentityVerified',
        message: 'the instance behind the node exists',
      },
    ],
  };
  return csr;
};

export const AUTHORIZATION_SCRIPTS: DifferentialScript[] = [
  {
    name: 'RBAC: binding or granting rights one lacks needs bind or escalate',
    steps: [
      clusterRole('secret-reader', SECRET_READER_RULES),
      clusterRole('carol-grantor', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings', 'clusterroles'],
          verbs: ['create', 'get'],
        },
      ]),
      bindClusterRole('carol-grantor', 'carol'),
      { as: 'carol', method: 'GET', path: `${RBAC}/clusterroles/absent`, until: 404 },
      {
        as: 'carol',
        method: 'POST',
        path: `${RBAC}/namespaces/default/rolebindings`,
        body: roleBinding('dave-secret-reader', 'ClusterRole', 'secret-reader'),
      },
      {
        as: 'carol',
        method: 'POST',
        path: `${RBAC}/namespaces/default/roles`,
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'carol-secret-reader', namespace: 'default' },
          rules: SECRET_READER_RULES,
        },
      },
      clusterRole('carol-binder', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'clusterroles'],
          verbs: ['bind', 'escalate'],
        },
      ]),
      bindClusterRole('carol-binder', 'carol'),
      {
        as: 'carol',
        method: 'POST',
        path: `${RBAC}/namespaces/default/rolebindings`,
        body: roleBinding('dave-secret-reader', 'ClusterRole', 'secret-reader'),
        until: 201,
        authorizes: ['bind rbac.authorization.k8s.io/clusterroles'],
      },
      {
        as: 'carol',
        method: 'POST',
        path: `${RBAC}/namespaces/default/roles`,
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'carol-secret-reader', namespace: 'default' },
          rules: SECRET_READER_RULES,
        },
        expect: 201,
        authorizes: ['escalate rbac.authorization.k8s.io/roles'],
      },
      {
        as: 'carol',
        method: 'POST',
        path: `${RBAC}/clusterroles`,
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'carol-cluster-secret-reader' },
          rules: SECRET_READER_RULES,
        },
        expect: 201,
        authorizes: ['escalate rbac.authorization.k8s.io/clusterroles'],
      },
      {
        as: 'carol',
        method: 'POST',
        path: `${RBAC}/namespaces/default/rolebindings`,
        body: roleBinding('dave-role-secret-reader', 'Role', 'carol-secret-reader'),
        expect: 201,
        authorizes: ['bind rbac.authorization.k8s.io/roles'],
      },
    ],
  },
  {
    name: "OwnerReferencesPermissionEnforcement: a NodeClaim blocking its NodePool's deletion, a Node its NodeClaim's",
    steps: [
      clusterRole('erin-writer', [
        { apiGroups: ['karpenter.sh'], resources: ['nodeclaims'], verbs: ['create', 'get'] },
        { apiGroups: [''], resources: ['nodes'], verbs: ['create', 'get'] },
      ]),
      bindClusterRole('erin-writer', 'erin'),
      { as: 'erin', method: 'GET', path: '/api/v1/nodes/absent', until: 404 },
      {
        as: 'erin',
        method: 'POST',
        path: '/apis/karpenter.sh/v1/nodeclaims',
        body: nodeClaim('owned-claim', POOL_OWNER),
      },
      clusterRole('erin-finalizers', [
        {
          apiGroups: ['karpenter.sh'],
          resources: ['nodepools/finalizers', 'nodeclaims/finalizers'],
          verbs: ['update'],
        },
      ]),
      bindClusterRole('erin-finalizers', 'erin'),
      {
        as: 'erin',
        method: 'POST',
        path: '/apis/karpenter.sh/v1/nodeclaims',
        body: nodeClaim('owned-claim', POOL_OWNER),
        until: 201,
        authorizes: ['update karpenter.sh/nodepools/finalizers'],
      },
      {
        as: 'erin',
        method: 'POST',
        path: '/api/v1/nodes',
        body: (earlier: readonly Answer[]) => ({
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: 'owned-node',
            ownerReferences: [
              {
                apiVersion: 'karpenter.sh/v1',
                kind: 'NodeClaim',
                name: 'owned-claim',
                uid:
                  (earlier[6]!.body as { metadata?: { uid?: string } }).metadata?.uid ?? OWNER_UID,
                blockOwnerDeletion: true,
              },
            ],
          },
        }),
        expect: 201,
        authorizes: ['update karpenter.sh/nodeclaims/finalizers'],
      },
    ],
  },
  {
    name: 'CSR approval: the approver needs approve on the signer',
    steps: [
      {
        method: 'POST',
        path: '/apis/certificates.k8s.io/v1/certificatesigningrequests',
        body: {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name: 'node-a-serving' },
          spec: {
            request: kubeletCsrRequest('node-a', { dnsNames: ['node-a.ec2.internal'] }),
            signerName: 'kubernetes.io/kubelet-serving',
            usages: ['digital signature', 'server auth'],
          },
        },
        expect: 201,
      },
      clusterRole('frank-approver', [
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['certificatesigningrequests'],
          verbs: ['get', 'list', 'watch'],
        },
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['certificatesigningrequests/approval'],
          verbs: ['update'],
        },
      ]),
      bindClusterRole('frank-approver', 'frank'),
      {
        as: 'frank',
        method: 'GET',
        path: '/apis/certificates.k8s.io/v1/certificatesigningrequests/node-a-serving',
        until: 200,
      },
      {
        as: 'frank',
        method: 'PUT',
        path: '/apis/certificates.k8s.io/v1/certificatesigningrequests/node-a-serving/approval',
        body: (earlier: readonly Answer[]) => csrApproval(earlier, 0),
      },
      clusterRole('frank-signer', [
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['signers'],
          resourceNames: ['kubernetes.io/kubelet-serving'],
          verbs: ['approve'],
        },
      ]),
      bindClusterRole('frank-signer', 'frank'),
      {
        as: 'frank',
        method: 'PUT',
        path: '/apis/certificates.k8s.io/v1/certificatesigningrequests/node-a-serving/approval',
        body: (earlier: readonly Answer[]) => csrApproval(earlier, 0),
        until: 200,
        authorizes: ['approve certificates.k8s.io/signers'],
      },
      // Signed by kube-controller-manager's signer once approved.
      {
        method: 'GET',
        path: '/apis/certificates.k8s.io/v1/certificatesigningrequests/node-a-serving',
        until: (a) => !!(a.body as { status?: { certificate?: string } }).status?.certificate,
      },
    ],
  },
  {
    name: 'ValidatingAdmissionPolicy: a Deny binding refuses, a Warn binding warns',
    steps: [
      ...(['deny', 'warn'] as const).flatMap((action): DifferentialStep[] => [
        {
          method: 'POST',
          path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
          body: {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: `${action}-key` },
            spec: {
              matchConstraints: {
                resourceRules: [
                  {
                    apiGroups: [''],
                    apiVersions: ['v1'],
                    operations: ['CREATE'],
                    resources: ['configmaps'],
                  },
                ],
              },
              validations: [
                {
                  expression: `!has(object.data) || !('${action}' in object.data)`,
                  message: `the ${action} key is not allowed`,
                },
              ],
            },
          },
          expect: 201,
        },
        {
          method: 'POST',
          path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
          body: {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: `${action}-key` },
            spec: {
              policyName: `${action}-key`,
              validationActions: [action === 'deny' ? 'Deny' : 'Warn'],
              matchResources: { objectSelector: { matchLabels: { 'admission-policy': 'test' } } },
            },
          },
          expect: 201,
        },
      ]),
      {
        method: 'POST',
        path: `${CONFIGMAPS}?dryRun=All`,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'denied', labels: { 'admission-policy': 'test' } },
          data: { deny: 'yes' },
        },
        until: (a) => a.status !== 201,
      },
      {
        method: 'POST',
        path: `${CONFIGMAPS}?dryRun=All`,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'warned', labels: { 'admission-policy': 'test' } },
          data: { warn: 'yes' },
        },
        until: (a) => (a.warnings?.length ?? 0) > 0,
      },
      {
        method: 'POST',
        path: CONFIGMAPS,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'unlabelled' },
          data: { deny: 'yes', warn: 'yes' },
        },
        expect: 201,
      },
    ],
  },
];

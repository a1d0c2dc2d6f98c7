import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CertificatesV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';

import { KubeApiServerEmulator, type KubeObject } from './index.js';

interface StatusBody {
  reason: string;
  code: number;
  message: string;
  details?: { name?: string; group?: string; kind?: string };
}

async function failure(p: Promise<unknown>): Promise<StatusBody> {
  try {
    await p;
  } catch (e) {
    const err = e as { code?: number; body?: unknown };
    const body = (typeof err.body === 'string' ? JSON.parse(err.body) : err.body) as StatusBody;
    expect(body.code).toBe(err.code);
    return body;
  }
  throw new Error('expected the request to fail');
}

const RBAC = 'rbac.authorization.k8s.io/v1';
const ref = (kind: 'Role' | 'ClusterRole', name: string) => ({
  apiGroup: 'rbac.authorization.k8s.io',
  kind,
  name,
});

describe('RBAC authorization', () => {
  const em = new KubeApiServerEmulator();
  const as = (token: string) => {
    const kc = new KubeConfig();
    kc.loadFromString(em.kubeconfigYaml('default', token));
    return kc;
  };
  let alice: KubeConfig;
  let robot: KubeConfig;
  let nobody: string;

  beforeAll(async () => {
    await em.start();
    alice = as(em.addUser('alice', ['devs', 'system:authenticated']));
    robot = as(em.addServiceAccount('team-a', 'robot'));
    nobody = em.addUser('nobody', []);
    const objects: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } },
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: 'node-reader' },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: 'devs-read-nodes' },
        roleRef: ref('ClusterRole', 'node-reader'),
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' }],
      },
      {
        apiVersion: RBAC,
        kind: 'Role',
        metadata: { name: 'config', namespace: 'team-a' },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create'] },
          {
            apiGroups: [''],
            resources: ['secrets'],
            resourceNames: ['allowed'],
            verbs: ['get', 'watch', 'list'],
          },
          { apiGroups: ['apps'], resources: ['deployments/status'], verbs: ['patch'] },
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create'] },
        ],
      },
      {
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name: 'robot-config', namespace: 'team-a' },
        roleRef: ref('Role', 'config'),
        subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team-a' }],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: 'aggregate' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'agg/to': 'devs' } }] },
        rules: [],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: 'ns-reader', labels: { 'agg/to': 'devs' } },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: 'alice-aggregate' },
        roleRef: ref('ClusterRole', 'aggregate'),
        subjects: [{ kind: 'User', name: 'alice' }],
      },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'allowed', namespace: 'team-a' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'other', namespace: 'team-a' } },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'team-a' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'web:1' }] },
          },
        },
      },
    ];
    em.seed(objects);
  });
  afterAll(async () => {
    await em.stop();
  });

  it('allows what a ClusterRoleBinding grants, and refuses the rest with the real 403', async () => {
    const core = alice.makeApiClient(CoreV1Api);
    expect((await core.listNode()).items).toEqual([]);
    const denied = await failure(core.listNamespacedPod({ namespace: 'default' }));
    expect(denied).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message:
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
      details: { kind: 'pods' },
    });
    const named = await failure(core.deleteNode({ name: 'n1' }));
    expect(named.message).toBe(
      'nodes "n1" is forbidden: User "alice" cannot delete resource "nodes" in API group "" at the cluster scope',
    );
    expect(named.details).toEqual({ name: 'n1', kind: 'nodes' });
  });

  it('aggregates ClusterRoles selected by an aggregationRule', async () => {
    const ns = await alice.makeApiClient(CoreV1Api).readNamespace({ name: 'team-a' });
    expect(ns.metadata?.name).toBe('team-a');
  });

  it('grants a RoleBinding in its own namespace only, to the service account it names', async () => {
    const core = robot.makeApiClient(CoreV1Api);
    expect((await core.listNamespacedConfigMap({ namespace: 'team-a' })).items).toEqual([]);
    const elsewhere = await failure(core.listNamespacedConfigMap({ namespace: 'team-b' }));
    expect(elsewhere.message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:team-a:robot" cannot list resource "configmaps" in API group "" in the namespace "team-b"',
    );
    const clusterWide = await failure(core.listConfigMapForAllNamespaces());
    expect(clusterWide.message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:team-a:robot" cannot list resource "configmaps" in API group "" at the cluster scope',
    );
  });

  it('resourceNames: the named object only; a list narrowed by metadata.name counts as named', async () => {
    const core = robot.makeApiClient(CoreV1Api);
    expect(
      (await core.readNamespacedSecret({ name: 'allowed', namespace: 'team-a' })).metadata?.name,
    ).toBe('allowed');
    expect(
      (await failure(core.readNamespacedSecret({ name: 'other', namespace: 'team-a' }))).message,
    ).toBe(
      'secrets "other" is forbidden: User "system:serviceaccount:team-a:robot" cannot get resource "secrets" in API group "" in the namespace "team-a"',
    );
    expect((await failure(core.listNamespacedSecret({ namespace: 'team-a' }))).code).toBe(403);
    const narrowed = await core.listNamespacedSecret({
      namespace: 'team-a',
      fieldSelector: 'metadata.name=allowed',
    });
    expect(narrowed.items.map((s) => s.metadata?.name)).toEqual(['allowed']);
  });

  it('subresources are authorized on their own', async () => {
    const token = em.addServiceAccount('team-a', 'robot');
    const patch = (path: string) =>
      em.fetch(path, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/merge-patch+json',
        },
        body: JSON.stringify({ status: { observedGeneration: 1 } }),
      });
    const status = await patch('/apis/apps/v1/namespaces/team-a/deployments/web/status');
    expect(status.status).toBe(200);
    const main = await patch('/apis/apps/v1/namespaces/team-a/deployments/web');
    expect(main.status).toBe(403);
    expect(((await main.json()) as StatusBody).message).toBe(
      'deployments.apps "web" is forbidden: User "system:serviceaccount:team-a:robot" cannot patch resource "deployments" in API group "apps" in the namespace "team-a"',
    );
  });

  it('non-resource URLs: discovery for authenticated users, a path message for others', async () => {
    const get = (token: string, path: string) =>
      em.fetch(path, { headers: { authorization: `Bearer ${token}` } });
    expect((await get(em.addUser('carol'), '/apis')).status).toBe(200);
    const res = await get(nobody, '/apis');
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      reason: 'Forbidden',
      message: 'forbidden: User "nobody" cannot get path "/apis"',
    });
  });

  it('SelfSubjectReview (kubectl auth whoami) echoes the authenticated user, for anyone authenticated', async () => {
    const review = await robot.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(review.status?.userInfo).toEqual({
      username: 'system:serviceaccount:team-a:robot',
      groups: expect.arrayContaining([
        'system:serviceaccounts:team-a',
        'system:authenticated',
      ]) as unknown,
    });
    // Without system:authenticated, system:basic-user does not apply: the real 403.
    const refused = await failure(
      as(nobody)
        .makeApiClient(AuthenticationV1Api)
        .createSelfSubjectReview({
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        }),
    );
    expect(refused).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('SelfSubjectAccessReview answers for the caller, with the reason RBAC gives', async () => {
    const authz = robot.makeApiClient(AuthorizationV1Api);
    const yes = await authz.createSelfSubjectAccessReview({
      body: {
        spec: { resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'configmaps' } },
      },
    });
    expect(yes.status).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "robot-config/team-a" of Role "config" to ServiceAccount "team-a/robot"',
    });
    const no = await authz.createSelfSubjectAccessReview({
      body: {
        spec: { resourceAttributes: { namespace: 'team-b', verb: 'get', resource: 'configmaps' } },
      },
    });
    expect(no.status).toEqual({ allowed: false });
    const named = await authz.createSelfSubjectAccessReview({
      body: {
        spec: {
          resourceAttributes: {
            namespace: 'team-a',
            verb: 'get',
            resource: 'secrets',
            name: 'allowed',
          },
        },
      },
    });
    expect(named.status?.allowed).toBe(true);
    const empty = await failure(authz.createSelfSubjectAccessReview({ body: { spec: {} } }));
    expect(empty).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    });
  });

  it('refuses a Role granting what its author does not hold (escalation prevention)', async () => {
    const rbac = robot.makeApiClient(RbacAuthorizationV1Api);
    const held = await rbac.createNamespacedRole({
      namespace: 'team-a',
      body: {
        metadata: { name: 'subset' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
      },
    });
    expect(held.metadata?.name).toBe('subset');
    const escalating = await failure(
      rbac.createNamespacedRole({
        namespace: 'team-a',
        body: {
          metadata: { name: 'more' },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }],
        },
      }),
    );
    expect(escalating.code).toBe(403);
    expect(escalating.message).toBe(
      'roles.rbac.authorization.k8s.io "more" is forbidden: user "system:serviceaccount:team-a:robot" (groups=["system:serviceaccounts" "system:serviceaccounts:team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get"]}\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
  });

  it('approving a CSR needs approve on its signer, beyond update on /approval', async () => {
    em.seed([
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: 'csr-approver' },
        rules: [
          {
            apiGroups: ['certificates.k8s.io'],
            resources: ['certificatesigningrequests'],
            verbs: ['create', 'get'],
          },
          {
            apiGroups: ['certificates.k8s.io'],
            resources: ['certificatesigningrequests/approval'],
            verbs: ['update'],
          },
          {
            apiGroups: ['certificates.k8s.io'],
            resources: ['signers'],
            resourceNames: ['kubernetes.io/kubelet-serving'],
            verbs: ['approve'],
          },
        ],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: 'alice-csr-approver' },
        roleRef: ref('ClusterRole', 'csr-approver'),
        subjects: [{ kind: 'User', name: 'alice' }],
      },
    ]);
    const certs = alice.makeApiClient(CertificatesV1Api);
    const request = Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\n').toString('base64');
    const approve = async (name: string, signerName: string) => {
      const csr = await certs.createCertificateSigningRequest({
        body: { metadata: { name }, spec: { request, signerName, usages: ['server auth'] } },
      });
      return certs.replaceCertificateSigningRequestApproval({
        name,
        body: {
          ...csr,
          status: {
            conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }],
          },
        },
      });
    };
    const ok = await approve('serving', 'kubernetes.io/kubelet-serving');
    expect(ok.status?.conditions?.[0]?.type).toBe('Approved');
    const refused = await failure(approve('client', 'kubernetes.io/kube-apiserver-client'));
    expect(refused).toMatchObject({
      code: 403,
      message:
        'certificatesigningrequests.certificates.k8s.io "client" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
    });
  });
});

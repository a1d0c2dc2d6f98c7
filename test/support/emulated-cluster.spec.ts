import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AuthorizationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import { startEmulatedCluster, type EmulatedCluster } from './emulated-cluster.js';
import { KARPENTER_USER } from './node-launch-simulator.js';

// The sidecar's kubeconfig carries its service account's token, so what it may do on an
// emulated cluster is exactly what deploy/sidecar/standalone/rbac.yaml grants.
describe('startEmulatedCluster', () => {
  let cluster: EmulatedCluster;
  let sidecar: KubeConfig;

  beforeAll(async () => {
    cluster = await startEmulatedCluster();
    sidecar = new KubeConfig();
    sidecar.loadFromFile(cluster.kubeconfigPath);
  });
  afterAll(async () => {
    await cluster.stop();
  });

  const can = async (verb: string, group: string, resource: string, extra = {}) =>
    (
      await sidecar.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { verb, group, resource, ...extra } } },
      })
    ).status?.allowed;

  it('runs the sidecar as its service account with the RBAC deploy/ grants, and no more', async () => {
    expect(cluster.sidecarUser).toBe(
      'system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar',
    );
    expect(
      await can('update', 'certificates.k8s.io', 'certificatesigningrequests', {
        subresource: 'approval',
      }),
    ).toBe(true);
    expect(
      await can('approve', 'certificates.k8s.io', 'signers', {
        name: 'kubernetes.io/kubelet-serving',
      }),
    ).toBe(true);
    expect(
      await can('approve', 'certificates.k8s.io', 'signers', {
        name: 'kubernetes.io/legacy-unknown',
      }),
    ).toBe(false);
    // Only the worker user-data Secret, by name: not the machine API's cloud credentials.
    expect(
      await can('get', '', 'secrets', {
        namespace: 'openshift-machine-api',
        name: 'worker-user-data',
      }),
    ).toBe(true);
    expect(
      await can('get', '', 'secrets', {
        namespace: 'openshift-machine-api',
        name: 'aws-cloud-credentials',
      }),
    ).toBe(false);
    expect(
      await can('get', '', 'secrets', { namespace: 'kube-system', name: 'worker-user-data' }),
    ).toBe(false);
    expect(await can('list', '', 'secrets', { namespace: 'openshift-machine-api' })).toBe(false);
    const denied = await sidecar
      .makeApiClient(CoreV1Api)
      .listNamespacedSecret({ namespace: 'openshift-machine-api' })
      .then(
        () => undefined,
        (e: { code?: number }) => e.code,
      );
    expect(denied).toBe(403);
  });

  it('the operand acting in-process is held to RBAC too (nothing granted before the sidecar applies it)', () => {
    expect(() =>
      cluster.kube.as(KARPENTER_USER).get('karpenter.sh/v1', 'NodeClaim', 'any'),
    ).toThrow(
      'nodeclaims.karpenter.sh "any" is forbidden: User "system:serviceaccount:openshift-karpenter:karpenter" cannot get resource "nodeclaims" in API group "karpenter.sh" at the cluster scope',
    );
  });
});

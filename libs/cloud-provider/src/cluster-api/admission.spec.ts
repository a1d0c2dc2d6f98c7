import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { KubeApiServerEmulator, upstreamCrdFiles } from '@fleet/testing';
import type { KubeObject } from '../types.js';
import { checkMachineDeploymentsAllowed, type DryRunCreate } from './admission.js';

const NS = 'openshift-cluster-api';
const VAP = 'admissionregistration.k8s.io/v1';

/** A fleet MachineDeployment as OpenShift's own Cluster API would hold it. */
const probe: KubeObject = {
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'MachineDeployment',
  metadata: { name: 'prod-east-7xk2p-karpenter-m6i-xlarge-us-east-1a', namespace: NS },
  spec: {
    clusterName: 'prod-east-7xk2p',
    replicas: 0,
    selector: { matchLabels: { 'cluster.x-k8s.io/cluster-name': 'prod-east-7xk2p' } },
    template: {
      metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'prod-east-7xk2p' } },
      spec: {
        clusterName: 'prod-east-7xk2p',
        bootstrap: { dataSecretName: 'worker-user-data' },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
          kind: 'AWSMachineTemplate',
          name: 'prod-east-7xk2p-karpenter-m6i-xlarge',
        },
      },
    },
  },
};

/** What the sidecar does: a server-side dry-run create through client-node. */
function dryRunCreate(em: KubeApiServerEmulator): DryRunCreate {
  const kc = new KubeConfig();
  kc.loadFromString(em.kubeconfigYaml());
  const api = kc.makeApiClient(CustomObjectsApi);
  return async (object) => {
    await api.createNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: object.metadata.namespace!,
      plural: 'machinedeployments',
      body: object,
      dryRun: 'All',
    });
  };
}

describe('checkMachineDeploymentsAllowed: the API server decides, by server-side dry-run', () => {
  const served = new KubeApiServerEmulator();
  const noCrd = new KubeApiServerEmulator();

  beforeAll(async () => {
    await Promise.all([served.start(), noCrd.start()]);
    served.loadCrdFiles(upstreamCrdFiles('cluster-api'));
    for (const em of [served, noCrd])
      em.seed([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);
  });
  afterAll(async () => {
    await Promise.all([served.stop(), noCrd.stop()]);
  });

  it('a release that serves MachineDeployments without a denying policy: allowed, nothing written', async () => {
    expect(await checkMachineDeploymentsAllowed(dryRunCreate(served), probe)).toBeUndefined();
    expect(served.list('cluster.x-k8s.io/v1beta1', 'MachineDeployment', NS)).toEqual([]);
  });

  it('an OpenShift-style ValidatingAdmissionPolicy denying them in openshift-cluster-api: MachineDeploymentsDenied quoting the policy and binding', async () => {
    served.seed([
      {
        apiVersion: VAP,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'openshift-cluster-api-deny-machinedeployments' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['cluster.x-k8s.io'],
                apiVersions: ['*'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['machinedeployments'],
              },
            ],
          },
          validations: [
            {
              expression: `object.metadata.namespace != '${NS}'`,
              message: 'MachineDeployments are not supported in openshift-cluster-api',
            },
          ],
        },
      },
      {
        apiVersion: VAP,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'openshift-cluster-api-deny-machinedeployments' },
        spec: {
          policyName: 'openshift-cluster-api-deny-machinedeployments',
          validationActions: ['Deny'],
        },
      },
    ]);
    expect(await checkMachineDeploymentsAllowed(dryRunCreate(served), probe)).toEqual({
      reason: 'MachineDeploymentsDenied',
      message:
        "the management cluster refuses MachineDeployments (dry-run create of openshift-cluster-api/prod-east-7xk2p-karpenter-m6i-xlarge-us-east-1a): HTTP 422: machinedeployments.cluster.x-k8s.io \"prod-east-7xk2p-karpenter-m6i-xlarge-us-east-1a\" is forbidden: ValidatingAdmissionPolicy 'openshift-cluster-api-deny-machinedeployments' with binding 'openshift-cluster-api-deny-machinedeployments' denied request: MachineDeployments are not supported in openshift-cluster-api",
    });
    // Once the policy is gone, the next check passes.
    served.delete(
      VAP,
      'ValidatingAdmissionPolicyBinding',
      'openshift-cluster-api-deny-machinedeployments',
    );
    expect(await checkMachineDeploymentsAllowed(dryRunCreate(served), probe)).toBeUndefined();
  });

  it('a release without the MachineDeployment CRD: MachineDeploymentsDenied naming the missing resource', async () => {
    expect(await checkMachineDeploymentsAllowed(dryRunCreate(noCrd), probe)).toMatchObject({
      reason: 'MachineDeploymentsDenied',
      message: expect.stringMatching(
        /^the management cluster does not serve cluster\.x-k8s\.io\/v1beta1 MachineDeployments \(dry-run create of openshift-cluster-api\/prod-east-7xk2p-karpenter-m6i-xlarge-us-east-1a: HTTP 404/,
      ),
    });
  });
});

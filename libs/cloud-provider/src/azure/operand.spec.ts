import { describe, expect, it } from '@jest/globals';
import { azureFixtureInfrastructure, desiredState } from '@fleet/testing';
import type { KubeObject } from '../types.js';
import { renderAzureOperand } from './operand.js';

const IMAGE = `quay.io/example/azure-karpenter-provider@sha256:${'1'.repeat(64)}`;

interface Pod {
  containers: {
    image: string;
    env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string } } }[];
    volumeMounts?: { name: string; mountPath: string }[];
  }[];
  volumes?: { name: string; projected?: unknown }[];
}

const deploymentOf = (objects: KubeObject[]) =>
  objects.find((o) => o.kind === 'Deployment') as unknown as {
    spec: { replicas: number; template: { spec: Pod } };
  };
const envOf = (objects: KubeObject[]) =>
  Object.fromEntries(
    deploymentOf(objects).spec.template.spec.containers[0]!.env.map((e) => [
      e.name,
      e.value ?? (e.valueFrom?.secretKeyRef ? `secret:${e.valueFrom.secretKeyRef.key}` : 'field'),
    ]),
  );

describe('karpenter-provider-azure (OpenShift fork) operand', () => {
  const infra = azureFixtureInfrastructure();

  it('renders the namespace, identity, RBAC, CredentialsRequest, Deployment and PDB in apply order', () => {
    expect(
      renderAzureOperand(infra, desiredState(), { image: IMAGE }).map(
        (o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`,
      ),
    ).toEqual([
      'Namespace//openshift-karpenter',
      'ServiceAccount/openshift-karpenter/karpenter',
      'ClusterRole//openshift-karpenter',
      'ClusterRoleBinding//openshift-karpenter',
      'Role/openshift-karpenter/openshift-karpenter',
      'RoleBinding/openshift-karpenter/openshift-karpenter',
      'Role/kube-node-lease/openshift-karpenter',
      'RoleBinding/kube-node-lease/openshift-karpenter',
      'CredentialsRequest/openshift-cloud-credential-operator/openshift-karpenter',
      'Deployment/openshift-karpenter/karpenter',
      'PodDisruptionBudget/openshift-karpenter/karpenter',
    ]);
  });

  it("sets the fork's settings from discovery and maps a service principal's keys", () => {
    const objects = renderAzureOperand(infra, desiredState({ logLevel: 'debug' }), {
      image: IMAGE,
    });
    expect(deploymentOf(objects).spec.template.spec.containers[0]!.image).toBe(IMAGE);
    expect(envOf(objects)).toEqual({
      SYSTEM_NAMESPACE: 'field',
      PROVISION_MODE: 'openshift',
      CLUSTER_NAME: 'prod-west-q8m4d',
      CLUSTER_ENDPOINT: 'https://api-int.prod-west.example.com:6443',
      VNET_SUBNET_ID: infra.vnetSubnetID,
      AZURE_NODE_RESOURCE_GROUP: 'prod-west-q8m4d-rg',
      ARM_RESOURCE_GROUP: 'prod-west-q8m4d-rg',
      LOCATION: 'eastus',
      ARM_CLOUD: 'AzurePublicCloud',
      NETWORK_PLUGIN: 'none',
      NETWORK_PLUGIN_MODE: '',
      NODE_IDENTITIES: infra.worker.managedIdentityID,
      DISABLE_WEBHOOK: 'true',
      HEALTH_PROBE_PORT: '8081',
      METRICS_PORT: '8080',
      FEATURE_GATES: 'Drift=true',
      LOG_LEVEL: 'debug',
      AZURE_SUBSCRIPTION_ID: 'secret:azure_subscription_id',
      AZURE_TENANT_ID: 'secret:azure_tenant_id',
      AZURE_CLIENT_ID: 'secret:azure_client_id',
      AZURE_CLIENT_SECRET: 'secret:azure_client_secret',
    });
    // A client secret needs no token mounted.
    expect(deploymentOf(objects).spec.template.spec.volumes).toBeUndefined();
  });

  it('maps a workload identity to AZURE_FEDERATED_TOKEN_FILE and mounts the projected token there', () => {
    const objects = renderAzureOperand(
      { ...infra, credentials: { ...infra.credentials, authentication: 'FederatedToken' } },
      desiredState(),
      { image: IMAGE },
    );
    const env = envOf(objects);
    expect(env.AZURE_FEDERATED_TOKEN_FILE).toBe('secret:azure_federated_token_file');
    expect(env.AZURE_CLIENT_SECRET).toBeUndefined();
    const pod = deploymentOf(objects).spec.template.spec;
    expect(pod.containers[0]!.volumeMounts).toEqual([
      {
        name: 'bound-sa-token',
        mountPath: '/var/run/secrets/openshift/serviceaccount',
        readOnly: true,
      },
    ]);
    expect(pod.volumes?.map((v) => v.name)).toEqual(['bound-sa-token']);
  });

  it('names no node identity when the workers have none, and scales to zero while paused', () => {
    const objects = renderAzureOperand(
      {
        ...infra,
        worker: { ...infra.worker, managedIdentityID: undefined },
      },
      desiredState({ paused: true }),
      { image: IMAGE },
    );
    expect(envOf(objects).NODE_IDENTITIES).toBeUndefined();
    expect(deploymentOf(objects).spec.replicas).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import {
  CAPI_CLUSTER,
  CRDS_DIR,
  capiFixtureObjects,
  desiredState,
  loadCrdValidator,
  startEmulatedCapiCluster,
  type EmulatedCapiCluster,
} from '@fleet/testing';
import {
  AWS_TEMPLATE_PARSER,
  InMemoryClusterObjectReader,
  discoverClusterApi,
  type ClusterApiInfrastructure,
} from '@fleet/discovery';
import { join } from 'node:path';
import type { KubeObject, TargetedObject } from '../types.js';
import { renderKarpenterNodeGroups } from './machine-deployments.js';
import {
  CLUSTER_API_RULES,
  managementServiceAccountName,
  renderClusterApiOperand,
  renderDefaultClusterApiNodeClass,
} from './operand.js';

const names = (objects: TargetedObject[], target: string) =>
  objects
    .filter((o) => o.target === target)
    .map((o) => `${o.object.kind}/${o.object.metadata.name}`);

const env = (objects: TargetedObject[]) => {
  const deployment = objects.find((o) => o.object.kind === 'Deployment')!.object as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
  };
  return Object.fromEntries(
    deployment.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]),
  );
};

describe('karpenter-provider-cluster-api operand, RBAC split and default ClusterAPINodeClass', () => {
  let infra: ClusterApiInfrastructure;
  let pair: EmulatedCapiCluster;

  beforeAll(async () => {
    const result = await discoverClusterApi({
      reader: new InMemoryClusterObjectReader(capiFixtureObjects()),
      clusterName: CAPI_CLUSTER.name,
      namespace: CAPI_CLUSTER.namespace,
      infrastructure: [AWS_TEMPLATE_PARSER],
    });
    if (!result.ok) throw new Error(result.message);
    infra = result.infrastructure;
    pair = await startEmulatedCapiCluster();
  });
  afterAll(async () => {
    await pair.stop();
  });

  const render = (access: 'same-cluster' | 'separate-cluster') =>
    renderClusterApiOperand(
      infra,
      desiredState({ logLevel: 'debug', featureGates: { Drift: true, NodeRepair: false } }),
      { image: 'example.com/karpenter-capi@sha256:0', access },
    );

  it('separate management cluster: Cluster API rights on the management side, Karpenter core on the workload side', () => {
    const objects = render('separate-cluster');
    expect(names(objects, 'management').sort()).toEqual([
      'ClusterRole/karpenter-fleet:cluster-api:capi-east:capi-east',
      'ClusterRoleBinding/karpenter-fleet:cluster-api:capi-east:capi-east',
      'ServiceAccount/karpenter-capi-east',
    ]);
    expect(names(objects, 'workload')).toContain('Deployment/karpenter');
    expect(names(objects, 'workload')).toContain(
      'ClusterRole/karpenter-fleet:cluster-api-provider',
    );
    const workloadRules = objects
      .filter((o) => o.target === 'workload' && o.object.kind === 'ClusterRole')
      .flatMap((o) => (o.object as unknown as { rules: { apiGroups: string[] }[] }).rules);
    expect(workloadRules.some((r) => r.apiGroups.includes('cluster.x-k8s.io'))).toBe(false);
    expect(env(objects)).toEqual({
      FEATURE_GATES: 'Drift=true,NodeRepair=false',
      LOG_LEVEL: 'debug',
      HEALTH_PROBE_PORT: '8081',
      METRICS_PORT: '8080',
      CLUSTER_API_KUBECONFIG: '/var/run/secrets/karpenter/cluster-api/kubeconfig',
    });
    expect(objects.every((o) => o.target === 'management' || o.target === 'workload')).toBe(true);
  });

  it("OpenShift's own Cluster API: one API server, the operand's service account holds the Cluster API rights, no CLUSTER_API_KUBECONFIG", () => {
    const objects = render('same-cluster');
    expect(names(objects, 'management')).toEqual([]);
    const binding = objects.find(
      (o) =>
        o.object.kind === 'ClusterRoleBinding' &&
        o.object.metadata.name.startsWith('karpenter-fleet:cluster-api:'),
    )!.object as unknown as { subjects: unknown[] };
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'karpenter', namespace: 'karpenter' },
    ]);
    expect(env(objects)).not.toHaveProperty('CLUSTER_API_KUBECONFIG');
  });

  it("the management grants are exactly the upstream chart's cluster.x-k8s.io rule, and work on the API server", async () => {
    expect(CLUSTER_API_RULES).toEqual([
      {
        apiGroups: ['cluster.x-k8s.io'],
        resources: ['machinedeployments', 'machines'],
        verbs: ['get', 'list', 'update', 'watch'],
      },
    ]);
    for (const { object } of render('separate-cluster').filter((o) => o.target === 'management'))
      pair.management.apply(
        structuredClone(object) as Parameters<typeof pair.management.apply>[0],
        {
          fieldManager: 'karpenter-fleet',
        },
      );
    const kc = new KubeConfig();
    kc.loadFromString(
      pair.management.kubeconfigYaml(
        'default',
        pair.management.addServiceAccount(
          CAPI_CLUSTER.namespace,
          managementServiceAccountName(infra),
        ),
      ),
    );
    const api = kc.makeApiClient(CustomObjectsApi);
    // Cluster-wide, as the provider lists MachineDeployments by label only.
    const listed = (await api.listClusterCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      plural: 'machinedeployments',
    })) as { items: unknown[] };
    expect(listed.items.length).toBeGreaterThan(0);
    const refused = await api
      .deleteNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta1',
        plural: 'machinedeployments',
        namespace: CAPI_CLUSTER.namespace,
        name: 'capi-east-m6i-us-east-1a',
      })
      .then(
        () => ({ code: 200 }),
        (e: unknown) => e as { code: number },
      );
    expect(refused).toMatchObject({ code: 403 });
  });

  it('the default ClusterAPINodeClass is CRD-valid and selects the fleet MachineDeployments of this cluster only', () => {
    const nodeClass = renderDefaultClusterApiNodeClass(infra);
    expect(nodeClass.target).toBe('workload');
    const validator = loadCrdValidator(
      join(CRDS_DIR, 'karpenter/karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml'),
    );
    expect(validator.validate(nodeClass.object).errors).toEqual([]);
    const matchLabels = (
      nodeClass.object.spec as { scalableResourceSelector: { matchLabels: Record<string, string> } }
    ).scalableResourceSelector.matchLabels;
    const selects = (o: KubeObject) =>
      Object.entries(matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v);
    const fleet = renderKarpenterNodeGroups({
      infra,
      capacities: [
        { instanceType: 'm6i.xlarge', vCpus: 4, memoryMiB: 16384, architecture: 'amd64' },
      ],
      templateKind: AWS_TEMPLATE_PARSER.templateKind,
      templateSpecFor: () => ({ instanceType: 'm6i.xlarge' }),
    })
      .map((o) => o.object)
      .filter((o) => o.kind === 'MachineDeployment');
    expect(fleet.every(selects)).toBe(true);
    // Another cluster's fleet MachineDeployments on the same management cluster.
    const other = renderKarpenterNodeGroups({
      infra: { ...infra, namespace: 'capi-west', clusterName: 'capi-west' },
      capacities: [
        { instanceType: 'm6i.xlarge', vCpus: 4, memoryMiB: 16384, architecture: 'amd64' },
      ],
      templateKind: AWS_TEMPLATE_PARSER.templateKind,
      templateSpecFor: () => ({ instanceType: 'm6i.xlarge' }),
    })
      .map((o) => o.object)
      .filter((o) => o.kind === 'MachineDeployment');
    expect(other.some(selects)).toBe(false);
    const workers = capiFixtureObjects().filter((o) => o.kind === 'MachineDeployment');
    expect(workers.some((w) => selects(w as KubeObject))).toBe(false);
  });
});

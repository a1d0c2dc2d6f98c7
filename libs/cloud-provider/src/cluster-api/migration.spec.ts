import { describe, expect, it } from '@jest/globals';
import { MigrationProposal } from '@fleet/contracts';
import { CRDS_DIR, capiFixtureObjects, loadCrdValidator } from '@fleet/testing';
import type { KubeObject } from '../types.js';
import { proposeClusterApiMigration } from './migration.js';

const nodePoolCrd = loadCrdValidator(`${CRDS_DIR}karpenter/karpenter.sh_nodepools.yaml`);

/** The worker groups of the Cluster API fixture (MachineDeployments and their MachineSets). */
const groups = () =>
  structuredClone(
    capiFixtureObjects().filter((o) => o.kind === 'MachineDeployment' || o.kind === 'MachineSet'),
  ) as KubeObject[];

interface PoolTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: { requirements: { key: string; values: string[] }[]; taints?: unknown[] };
}
const values = (pool: MigrationProposal['nodePools'][number], key: string) =>
  (pool.spec.template as PoolTemplate).spec.requirements.find((r) => r.key === key)?.values;

function expectValid(proposal: MigrationProposal) {
  expect(MigrationProposal.safeParse(proposal).success).toBe(true);
  for (const pool of proposal.nodePools) {
    const result = nodePoolCrd.validate({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: pool.name },
      spec: pool.spec,
    });
    expect(result.errors).toEqual([]);
  }
}

describe('proposeClusterApiMigration', () => {
  it('merges the fixture MachineDeployments of one shape into one NodePool on the ClusterAPINodeClass', () => {
    const proposal = proposeClusterApiMigration(groups());
    expectValid(proposal);
    expect(proposal.nodePools).toHaveLength(1);
    const pool = proposal.nodePools[0]!;
    expect(pool.replaces).toEqual([
      'MachineDeployment/capi-east-c6i-us-east-1a',
      'MachineDeployment/capi-east-m6i-us-east-1a',
      'MachineDeployment/capi-east-m6i-us-east-1b',
    ]);
    expect(values(pool, 'node.kubernetes.io/instance-type')).toEqual(['c6i.2xlarge', 'm6i.xlarge']);
    expect(values(pool, 'topology.kubernetes.io/zone')).toEqual(['us-east-1a', 'us-east-1b']);
    // Capacities from the scale-from-zero annotations: 10 × 8 + 10 × 4 + 10 × 4 vCPU, 30 × 16Gi.
    expect(pool.spec.limits).toEqual({ nodes: '30', cpu: '160', memory: '480Gi' });
    expect((pool.spec.template as { spec: { nodeClassRef: unknown } }).spec.nodeClassRef).toEqual({
      group: 'karpenter.cluster.x-k8s.io',
      kind: 'ClusterAPINodeClass',
      name: 'default',
    });
    expect(proposal.notExpressible).toEqual([]);
    expect(pool.explanations).toContain(
      "capacity type on-demand: the group's annotations do not say its market (a spot option would be in its infrastructure template, which is not read); check before applying",
    );
    // The MachineSets belong to the MachineDeployments (scaled through them): not groups of their own.
    expect(proposal.explanations).toEqual([
      'the fleet renders a MachineDeployment per instance type and failure domain for Karpenter: allowedInstanceTypes c6i.2xlarge, m6i.xlarge lets the proposed NodePools launch every type the groups had',
    ]);
  });

  it('keeps a tainted GPU group apart, leaves out groups at max 0 and names a group without an instance type', () => {
    const input = groups();
    const gpu = structuredClone(input.find((g) => g.metadata.name === 'capi-east-c6i-us-east-1a')!);
    gpu.metadata.name = 'capi-east-gpu-us-east-1a';
    gpu.metadata.annotations = {
      ...gpu.metadata.annotations,
      'capacity.cluster-autoscaler.kubernetes.io/labels':
        'topology.kubernetes.io/zone=us-east-1a,node.kubernetes.io/instance-type=g5.2xlarge,example.com/accelerator=a10g',
      'capacity.cluster-autoscaler.kubernetes.io/taints': 'nvidia.com/gpu=true:NoSchedule',
      'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '1',
      'capacity.cluster-autoscaler.kubernetes.io/gpu-type': 'nvidia.com/gpu',
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '1',
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '2',
    };
    const off = input.find((g) => g.metadata.name === 'capi-east-m6i-us-east-1b')!;
    off.metadata.annotations!['cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size'] = '0';
    const untyped = input.find((g) => g.metadata.name === 'capi-east-m6i-us-east-1a')!;
    untyped.metadata.annotations!['capacity.cluster-autoscaler.kubernetes.io/labels'] =
      'kubernetes.io/arch=amd64';
    const standalone = structuredClone(input.find((g) => g.kind === 'MachineSet')!);
    standalone.metadata.name = 'capi-east-spare';
    delete standalone.metadata.labels!['cluster.x-k8s.io/deployment-name'];
    const proposal = proposeClusterApiMigration([...input, gpu, standalone]);
    expectValid(proposal);
    expect(proposal.nodePools.map((p) => p.name)).toEqual(['c6i', 'gpu']);
    const gpuPool = proposal.nodePools[1]!;
    expect((gpuPool.spec.template as PoolTemplate).spec.taints).toEqual([
      { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
    ]);
    expect((gpuPool.spec.template as PoolTemplate).metadata?.labels).toEqual({
      'example.com/accelerator': 'a10g',
    });
    expect(gpuPool.spec.limits).toEqual({
      nodes: '2',
      cpu: '16',
      memory: '32Gi',
      'nvidia.com/gpu': '2',
    });
    expect(proposal.notExpressible.map((n) => `${n.object}: ${n.what}`)).toEqual([
      'MachineDeployment/capi-east-m6i-us-east-1a: annotation capacity.cluster-autoscaler.kubernetes.io/labels',
      'MachineDeployment/capi-east-gpu-us-east-1a: minimum size 1',
    ]);
    expect(proposal.explanations).toContain(
      'MachineSet/capi-east-spare carries no max-size annotation: the Cluster Autoscaler does not scale it, so no NodePool replaces it',
    );
    expect(proposal.explanations).toContain(
      'MachineDeployment/capi-east-m6i-us-east-1b is left out: its maximum size is 0, so the Cluster Autoscaler never adds a node to it',
    );
  });
});

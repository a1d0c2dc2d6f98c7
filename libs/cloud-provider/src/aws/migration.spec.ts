import { describe, expect, it } from '@jest/globals';
import { MigrationProposal, NodeClassOverrides } from '@fleet/contracts';
import { CRDS_DIR, fixtureObject, fixtureObjects, loadCrdValidator } from '@fleet/testing';
import type { KubeObject } from '../types.js';
import { renderDefaultEC2NodeClass } from './nodeclass.js';
import { proposeAwsStandaloneMigration } from './migration.js';
import { fixtureInfrastructure } from '@fleet/testing';

const nodePoolCrd = loadCrdValidator(`${CRDS_DIR}karpenter/karpenter.sh_nodepools.yaml`);
const nodeClassCrd = loadCrdValidator(`${CRDS_DIR}karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml`);

interface Obj extends KubeObject {
  spec: {
    minReplicas: number;
    maxReplicas: number;
    scaleTargetRef?: Record<string, string>;
    resourceLimits: { cores: { max: number }; maxNodesTotal: number };
    template: {
      spec: {
        metadata?: { labels?: Record<string, string> };
        taints?: { key: string; value?: string; effect: string }[];
        providerSpec: { value: Record<string, unknown> };
      };
    };
  };
}

interface PoolTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: { requirements: { key: string; values: string[] }[]; taints?: unknown[] };
}
const template = (pool: MigrationProposal['nodePools'][number]) =>
  pool.spec.template as PoolTemplate;

/** The fixture cluster's Cluster Autoscaler objects, as the sidecar reads them. */
function fixture() {
  const all = fixtureObjects() as Obj[];
  return {
    clusterAutoscaler: all.find((o) => o.kind === 'ClusterAutoscaler'),
    machineAutoscalers: all.filter((o) => o.kind === 'MachineAutoscaler'),
    machineSets: all.filter((o) => o.kind === 'MachineSet'),
  };
}

const machineSet = (file: string) => structuredClone(fixtureObject<Obj>(file));

/** A MachineSet variant: a new name (and zone), and whatever `edit` changes. */
function variant(file: string, name: string, edit: (ms: Obj) => void): Obj {
  const ms = machineSet(file);
  ms.metadata.name = name;
  edit(ms);
  return ms;
}

/** A MachineAutoscaler (typed as Obj, whose spec fields the tests read, to sit beside the fixture's). */
const autoscaler = (name: string, target: string, min: number, max: number): Obj =>
  ({
    apiVersion: 'autoscaling.openshift.io/v1beta1',
    kind: 'MachineAutoscaler',
    metadata: { name, namespace: 'openshift-machine-api' },
    spec: {
      minReplicas: min,
      maxReplicas: max,
      scaleTargetRef: {
        apiVersion: 'machine.openshift.io/v1beta1',
        kind: 'MachineSet',
        name: target,
      },
    },
  }) as unknown as Obj;

const providerSpec = (ms: Obj) => ms.spec.template.spec.providerSpec.value;

/** Every proposed NodePool validates against the real CRD (schema + CEL), as the API checks. */
function expectValid(proposal: MigrationProposal) {
  expect(MigrationProposal.safeParse(proposal).success).toBe(true);
  for (const pool of proposal.nodePools) {
    // As stored: the spec exactly as proposed, nodeClassRef included (the CRD requires it).
    const result = nodePoolCrd.validate({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: pool.name },
      spec: pool.spec,
    });
    expect(result.errors).toEqual([]);
    expect(result.skippedRules).toEqual([]);
  }
  const overrides = NodeClassOverrides.parse(proposal.nodeClassOverrides);
  const nodeClass = renderDefaultEC2NodeClass(fixtureInfrastructure(), overrides);
  expect(nodeClassCrd.validate(nodeClass).errors).toEqual([]);
}

const requirement = (pool: MigrationProposal['nodePools'][number], key: string) =>
  template(pool).spec.requirements.find((r) => r.key === key)?.values;

describe('proposeAwsStandaloneMigration', () => {
  it('turns the fixture cluster into one NodePool over its three worker MachineSets', () => {
    const proposal = proposeAwsStandaloneMigration(fixture());
    expectValid(proposal);
    expect(proposal.nodePools).toHaveLength(1);
    const [pool] = proposal.nodePools;
    expect(pool!.name).toBe('worker');
    expect(pool!.replaces).toEqual([
      'MachineSet/prod-east-7xk2p-worker-us-east-1a',
      'MachineSet/prod-east-7xk2p-worker-us-east-1b',
      'MachineSet/prod-east-7xk2p-worker-us-east-1c',
    ]);
    expect(requirement(pool!, 'node.kubernetes.io/instance-type')).toEqual(['m6i.xlarge']);
    expect(requirement(pool!, 'topology.kubernetes.io/zone')).toEqual([
      'us-east-1a',
      'us-east-1b',
      'us-east-1c',
    ]);
    expect(requirement(pool!, 'karpenter.sh/capacity-type')).toEqual(['on-demand']);
    // 3 × max 12 nodes of 4 vCPU / 16 GiB: 144 vCPU and 576 GiB, tighter than the
    // ClusterAutoscaler's 256 cores and 1024 GiB; 36 nodes tighter than maxNodesTotal 60.
    expect(pool!.spec.limits).toEqual({ nodes: '36', cpu: '144', memory: '576Gi' });
    expect(pool!.spec.disruption).toEqual({
      consolidationPolicy: 'WhenEmpty',
      consolidateAfter: '5m',
      budgets: [{ nodes: '10%' }],
    });
    expect(pool!.explanations).toContain(
      'instance types m6i.xlarge from MachineSets prod-east-7xk2p-worker-us-east-1a, prod-east-7xk2p-worker-us-east-1b, prod-east-7xk2p-worker-us-east-1c',
    );
    expect(pool!.explanations.find((e) => e.startsWith('limits'))).toContain(
      'cpu 144: 12 × 4 vCPU m6i.xlarge, 12 × 4 vCPU m6i.xlarge, 12 × 4 vCPU m6i.xlarge; tighter than resourceLimits.cores.max 256 of ClusterAutoscaler/default',
    );
    expect(pool!.explanations.find((e) => e.startsWith('disruption'))).toContain(
      'scaleDown.unneededTime of ClusterAutoscaler/default',
    );
    // min 1 on every group, the scale-down delays and the priority threshold: named, not dropped.
    expect(proposal.notExpressible.map((n) => `${n.object}: ${n.what}`)).toEqual([
      'ClusterAutoscaler/default: scaleDown.delayAfterAdd "10m"',
      'ClusterAutoscaler/default: scaleDown.delayAfterDelete "5m"',
      'ClusterAutoscaler/default: scaleDown.delayAfterFailure "30s"',
      'ClusterAutoscaler/default: podPriorityThreshold -10',
      'MachineSet/prod-east-7xk2p-worker-us-east-1a: minimum size 1',
      'MachineSet/prod-east-7xk2p-worker-us-east-1b: minimum size 1',
      'MachineSet/prod-east-7xk2p-worker-us-east-1c: minimum size 1',
      'ClusterAutoscaler/default: resourceLimits minimums (cores 8, memory 4Gi)',
    ]);
    // The infra MachineSet has no MachineAutoscaler: not the Cluster Autoscaler's, left alone.
    expect(proposal.explanations).toEqual([
      'MachineSet prod-east-7xk2p-infra-us-east-1a has no MachineAutoscaler: the Cluster Autoscaler does not scale it, so no NodePool replaces it',
    ]);
    expect(proposal.nodeClassOverrides).toEqual({});
  });

  it('gives a tainted GPU group its own NodePool with a GPU limit', () => {
    const input = fixture();
    const gpu = variant(
      'machineset-worker-us-east-1a.yaml',
      'prod-east-7xk2p-gpu-us-east-1a',
      (ms) => {
        providerSpec(ms).instanceType = 'g5.2xlarge';
        ms.spec.template.spec.taints = [
          { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
        ];
        ms.spec.template.spec.metadata = { labels: { 'example.com/accelerator': 'a10g' } };
      },
    );
    const proposal = proposeAwsStandaloneMigration({
      ...input,
      machineSets: [...input.machineSets, gpu],
      machineAutoscalers: [...input.machineAutoscalers, autoscaler('gpu', gpu.metadata.name, 0, 4)],
    });
    expectValid(proposal);
    expect(proposal.nodePools.map((p) => p.name)).toEqual(['gpu', 'worker']);
    const pool = proposal.nodePools[0]!;
    expect(template(pool).spec.taints).toEqual([
      { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
    ]);
    expect(template(pool).metadata?.labels).toEqual({
      'example.com/accelerator': 'a10g',
    });
    expect(pool.spec.limits).toEqual({
      nodes: '4',
      cpu: '32',
      memory: '128Gi',
      'nvidia.com/gpu': '4',
    });
    expect(pool.explanations).toContain(
      'taints nvidia.com/gpu=true:NoSchedule carried over from the node template',
    );
    // min 0: nothing to name for the GPU group.
    expect(proposal.notExpressible.filter((n) => n.object.includes('gpu'))).toEqual([]);
    // Two NodePools, each capped alone: the cluster-wide maximum cannot be said.
    expect(proposal.notExpressible.map((n) => n.what)).not.toContain(
      'resourceLimits.cores.max 256 for the whole cluster',
    );
  });

  it('merges groups of the same shape across types and zones, and keeps zone-pinned groups apart by shape', () => {
    const input = fixture();
    const big = variant(
      'machineset-worker-us-east-1b.yaml',
      'prod-east-7xk2p-worker-big-us-east-1b',
      (ms) => {
        providerSpec(ms).instanceType = 'm6i.2xlarge';
      },
    );
    const pinned = variant(
      'machineset-worker-us-east-1c.yaml',
      'prod-east-7xk2p-db-us-east-1c',
      (ms) => {
        ms.spec.template.spec.metadata = { labels: { 'example.com/tier': 'db' } };
        providerSpec(ms).spotMarketOptions = {};
      },
    );
    const proposal = proposeAwsStandaloneMigration({
      ...input,
      machineSets: [...input.machineSets, big, pinned],
      machineAutoscalers: [
        ...input.machineAutoscalers,
        autoscaler('big', big.metadata.name, 0, 6),
        autoscaler('db', pinned.metadata.name, 0, 3),
      ],
    });
    expectValid(proposal);
    const worker = proposal.nodePools.find((p) => p.name === 'worker')!;
    expect(requirement(worker, 'node.kubernetes.io/instance-type')).toEqual([
      'm6i.2xlarge',
      'm6i.xlarge',
    ]);
    expect(worker.replaces).toHaveLength(4);
    expect(worker.spec.limits).toEqual({ nodes: '42', cpu: '192', memory: '768Gi' });
    const db = proposal.nodePools.find((p) => p.name === 'db')!;
    expect(requirement(db, 'topology.kubernetes.io/zone')).toEqual(['us-east-1c']);
    expect(requirement(db, 'karpenter.sh/capacity-type')).toEqual(['spot']);
    expect(db.explanations).toContain(
      'capacity type spot: prod-east-7xk2p-db-us-east-1c asks for spot instances',
    );
    expect(db.explanations).toContain(
      'zones us-east-1c: prod-east-7xk2p-db-us-east-1c in us-east-1c',
    );
    // 42 + 3 nodes over maxNodesTotal 60? No: 45 ≤ 60. cpu 192 + 12 ≤ 256: nothing cluster-wide lost.
    expect(proposal.notExpressible.some((n) => n.what.includes('for the whole cluster'))).toBe(
      false,
    );
  });

  it('leaves out groups at max 0, says when the ClusterAutoscaler limit is the tighter one, and names what cannot be expressed', () => {
    const input = fixture();
    input.clusterAutoscaler!.spec.resourceLimits.cores.max = 64;
    input.clusterAutoscaler!.spec.resourceLimits.maxNodesTotal = 20;
    const off = input.machineAutoscalers.find((m) => m.metadata.name === 'worker-us-east-1c')!;
    off.spec.maxReplicas = 0;
    off.spec.minReplicas = 0;
    const infra = input.machineSets.find((m) => m.metadata.name.includes('infra'))!;
    infra.metadata.annotations = {
      'machine.openshift.io/autoscaling-options-scaledownunneededtime': '20m',
    };
    const proposal = proposeAwsStandaloneMigration({
      ...input,
      machineAutoscalers: [
        ...input.machineAutoscalers,
        autoscaler('infra', infra.metadata.name, 0, 2),
      ],
    });
    expectValid(proposal);
    expect(proposal.explanations).toContain(
      'MachineSet/prod-east-7xk2p-worker-us-east-1c is left out: its maximum size is 0, so the Cluster Autoscaler never adds a node to it',
    );
    const worker = proposal.nodePools.find((p) => p.name === 'worker')!;
    expect(worker.replaces).toEqual([
      'MachineSet/prod-east-7xk2p-worker-us-east-1a',
      'MachineSet/prod-east-7xk2p-worker-us-east-1b',
    ]);
    expect(worker.spec.limits).toEqual({ nodes: '20', cpu: '64', memory: '384Gi' });
    expect(worker.explanations.find((e) => e.startsWith('limits'))).toContain(
      "cpu 64: resourceLimits.cores.max of ClusterAutoscaler/default, tighter than the groups' maxima (96",
    );
    // The infra group: its node-role label is in a domain Karpenter refuses; its taint carries.
    const infraPool = proposal.nodePools.find((p) => p.name === 'infra')!;
    expect(template(infraPool).metadata).toBeUndefined();
    expect(template(infraPool).spec.taints).toEqual([
      { key: 'node-role.kubernetes.io/infra', effect: 'NoSchedule' },
    ]);
    const named = proposal.notExpressible.filter(
      (n) => n.object === `MachineSet/${infra.metadata.name}`,
    );
    expect(named.map((n) => n.what)).toEqual([
      'annotation machine.openshift.io/autoscaling-options-scaledownunneededtime=20m',
      'label node-role.kubernetes.io/infra=""',
    ]);
    expect(named[1]!.reason).toContain('kubernetes.io domain');
    // Two pools each capped at the cluster's 64 cores and 20 nodes: together they could exceed it.
    expect(proposal.notExpressible.map((n) => n.what)).toEqual(
      expect.arrayContaining([
        'resourceLimits.cores.max 64 for the whole cluster',
        'resourceLimits.maxNodesTotal 20 for the whole cluster',
      ]),
    );
    // infra's 200 GiB root volume is larger than the worker set's 120 GiB: the NodeClass grows.
    expect(proposal.nodeClassOverrides.blockDeviceMappings).toEqual([
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: { deleteOnTermination: true, volumeSize: '200Gi', volumeType: 'gp3', encrypted: true },
      },
    ]);
    expect(proposal.nodeClassExplanations[0]).toContain(
      'MachineSet prod-east-7xk2p-infra-us-east-1a has 200Gi where the default EC2NodeClass copies 120Gi from prod-east-7xk2p-worker-us-east-1a',
    );
  });

  it('proposes nothing when every group is at zero, and names a MachineAutoscaler without its MachineSet', () => {
    const input = fixture();
    for (const m of input.machineAutoscalers) m.spec.maxReplicas = 0;
    const proposal = proposeAwsStandaloneMigration({
      ...input,
      machineAutoscalers: [...input.machineAutoscalers, autoscaler('gone', 'no-such-set', 0, 3)],
    });
    expectValid(proposal);
    expect(proposal.nodePools).toEqual([]);
    expect(proposal.explanations).toContain(
      'MachineAutoscaler/gone is left out: its MachineSet no-such-set does not exist',
    );
    expect(proposal.explanations).toContain(
      'no group can be scaled up by the Cluster Autoscaler: no NodePool proposed',
    );
  });

  it('without a ClusterAutoscaler, limits come from the groups alone and the default unneeded time applies', () => {
    const input = fixture();
    const proposal = proposeAwsStandaloneMigration({ ...input, clusterAutoscaler: undefined });
    expectValid(proposal);
    const pool = proposal.nodePools[0]!;
    expect(pool.spec.limits).toEqual({ nodes: '36', cpu: '144', memory: '576Gi' });
    expect((pool.spec.disruption as { consolidateAfter: string }).consolidateAfter).toBe('10m');
    expect(proposal.notExpressible.map((n) => n.object)).toEqual([
      'MachineSet/prod-east-7xk2p-worker-us-east-1a',
      'MachineSet/prod-east-7xk2p-worker-us-east-1b',
      'MachineSet/prod-east-7xk2p-worker-us-east-1c',
    ]);
  });

  it('leaves cpu and memory to the ClusterAutoscaler for an instance type it does not know', () => {
    const input = fixture();
    for (const ms of input.machineSets) providerSpec(ms).instanceType = 'x9z.mega';
    const proposal = proposeAwsStandaloneMigration(input);
    expectValid(proposal);
    const pool = proposal.nodePools.find((p) => p.name === 'worker')!;
    expect(pool.spec.limits).toEqual({ nodes: '36', cpu: '256', memory: '1024Gi' });
    expect(pool.explanations.find((e) => e.startsWith('limits'))).toContain(
      'the capacity of x9z.mega is not known here',
    );
  });
});

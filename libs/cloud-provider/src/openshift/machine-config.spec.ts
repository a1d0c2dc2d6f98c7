import { describe, expect, it } from '@jest/globals';
import { CRDS_DIR, fixtureInfrastructure, loadCrdValidator } from '@fleet/testing';
import { InvalidDesiredStateError } from '../errors.js';
import {
  customPoolOverlaps,
  machineConfigReadiness,
  mergePatchTo,
  NodeClassConfigError,
  poolIgnitionPointer,
  renderNodeClassMachineConfig,
  validateKubeletForMachineConfig,
} from './machine-config.js';

const crd = (file: string) => loadCrdValidator(`${CRDS_DIR}openshift/${file}`);
const pools = crd('machineconfiguration.openshift.io_machineconfigpools.yaml');
const kubeletConfigs = crd('machineconfiguration.openshift.io_kubeletconfigs.yaml');
const worker = fixtureInfrastructure().userData;

type Pointer = {
  ignition: {
    config: { merge: { source: string }[] };
    security: unknown;
    version: string;
  };
};

describe('Ignition pointer of a NodeClass', () => {
  it("is the worker's pointer with only the MCS path moved to the NodeClass's pool", () => {
    const derived = JSON.parse(poolIgnitionPointer(worker, 'gpu')) as Pointer;
    const original = JSON.parse(worker) as Pointer;
    expect(derived.ignition.config.merge).toEqual([
      { source: 'https://api-int.prod-east.example.com:22623/config/karpenter-gpu' },
    ]);
    expect(derived.ignition.security).toEqual(original.ignition.security);
    expect(derived.ignition.version).toBe(original.ignition.version);
  });

  it.each([
    ['not JSON', '#cloud-config', 'is not JSON'],
    ['no merge source', '{"ignition":{"version":"3.2.0"}}', 'exactly one source'],
    [
      'two sources',
      '{"ignition":{"config":{"merge":[{"source":"https://a:22623/config/worker"},{"source":"https://b:22623/config/worker"}]}}}',
      'exactly one source',
    ],
    [
      'not an MCS URL',
      '{"ignition":{"config":{"merge":[{"source":"https://example.com/ignition.json"}]}}}',
      'is not a Machine Config Server URL',
    ],
    [
      'plain HTTP',
      '{"ignition":{"config":{"merge":[{"source":"http://api-int:22623/config/worker"}]}}}',
      'is not a Machine Config Server URL',
    ],
  ])('refuses a worker user data that is %s, naming why', (_what, userData, why) => {
    let error: unknown;
    try {
      poolIgnitionPointer(userData, 'default');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(NodeClassConfigError);
    expect((error as NodeClassConfigError).reason).toBe('IgnitionPointerInvalid');
    expect((error as Error).message).toContain(why);
    expect((error as Error).message).toContain('karpenter-default');
  });

  it('refuses a NodeClass whose pool name could not be a label name', () => {
    let error: unknown;
    try {
      poolIgnitionPointer(worker, 'x'.repeat(54));
    } catch (err) {
      error = err;
    }
    expect((error as NodeClassConfigError).reason).toBe('NodeClassNameTooLong');
    expect(() => poolIgnitionPointer(worker, 'x'.repeat(53))).not.toThrow();
  });
});

describe('MachineConfigPool, KubeletConfig and user-data Secret of a NodeClass', () => {
  const render = (kubelet?: Record<string, unknown>) =>
    renderNodeClassMachineConfig({
      nodeClass: 'gpu',
      nodeClassLabel: 'karpenter.k8s.aws/ec2nodeclass',
      workerUserData: worker,
      kubelet,
    });

  it('selects worker MachineConfigs plus its own, and only the nodes of its NodeClass', () => {
    const [secret, pool] = render();
    expect(pool).toMatchObject({
      kind: 'MachineConfigPool',
      metadata: {
        name: 'karpenter-gpu',
        labels: {
          'fleet.karpenter.sh/managed-by': 'karpenter-fleet',
          'fleet.karpenter.sh/nodeclass': 'gpu',
          'pools.operator.machineconfiguration.openshift.io/karpenter-gpu': '',
        },
      },
      spec: {
        machineConfigSelector: {
          matchExpressions: [
            {
              key: 'machineconfiguration.openshift.io/role',
              operator: 'In',
              values: ['worker', 'karpenter-gpu'],
            },
          ],
        },
        nodeSelector: { matchLabels: { 'karpenter.k8s.aws/ec2nodeclass': 'gpu' } },
      },
    });
    expect(pools.validate(pool).errors).toEqual([]);
    expect(secret).toMatchObject({
      kind: 'Secret',
      metadata: { name: 'karpenter-gpu-user-data', namespace: 'openshift-machine-api' },
    });
    const data = (secret as unknown as { data: Record<string, string> }).data;
    expect(Buffer.from(data.userData!, 'base64').toString()).toBe(
      poolIgnitionPointer(worker, 'gpu'),
    );
  });

  const UNREGISTERED = { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' };

  it("always registers the pool's nodes with Karpenter's unregistered taint, settings or not", () => {
    // Karpenter core (nodeclaim/lifecycle/registration.go) expects every node it launched to
    // register with it; without it pods may land before the NodePool's taints and labels do.
    const kc = render().find((o) => o.kind === 'KubeletConfig');
    expect(kc).toMatchObject({
      metadata: { name: 'karpenter-gpu' },
      spec: {
        machineConfigPoolSelector: {
          matchLabels: { 'pools.operator.machineconfiguration.openshift.io/karpenter-gpu': '' },
        },
        kubeletConfig: { registerWithTaints: [UNREGISTERED] },
      },
    });
    expect(kubeletConfigs.validate(kc).errors).toEqual([]);
    // Desired settings cannot take it away: their own taints come first, the taint last, once.
    const withTaints = render({
      registerWithTaints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, UNREGISTERED],
    }).find((o) => o.kind === 'KubeletConfig') as { spec: { kubeletConfig: unknown } } | undefined;
    expect(withTaints?.spec.kubeletConfig).toEqual({
      registerWithTaints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, UNREGISTERED],
    });
  });

  it('carries desired kubelet settings in the KubeletConfig selecting the pool', () => {
    const objects = render({ maxPods: 50, systemReserved: { cpu: '500m', memory: '1Gi' } });
    const kc = objects.find((o) => o.kind === 'KubeletConfig');
    expect(kc).toMatchObject({
      metadata: { name: 'karpenter-gpu' },
      spec: {
        machineConfigPoolSelector: {
          matchLabels: { 'pools.operator.machineconfiguration.openshift.io/karpenter-gpu': '' },
        },
        kubeletConfig: {
          maxPods: 50,
          systemReserved: { cpu: '500m', memory: '1Gi' },
          registerWithTaints: [UNREGISTERED],
        },
      },
    });
    expect(kubeletConfigs.validate(kc).errors).toEqual([]);
  });

  it.each([
    ['cgroupDriver', { cgroupDriver: 'systemd' }],
    ['clusterDomain', { clusterDomain: 'cluster.local' }],
    ['featureGates', { featureGates: { Foo: true } }],
    ['failSwapOn', { failSwapOn: false }],
    ['memorySwap.swapBehavior', { memorySwap: { swapBehavior: 'NoSwap' } }],
    ['staticPodPath', { staticPodPath: '/etc/kubernetes/manifests' }],
    ['systemReservedCgroup', { systemReservedCgroup: '/a', systemCgroups: '/b' }],
  ])('refuses %s as the MCO would (helpers.go validateUserKubeletConfig)', (field, kubelet) => {
    let error: unknown;
    try {
      validateKubeletForMachineConfig({ kubelet });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidDesiredStateError);
    expect((error as InvalidDesiredStateError).causes).toEqual([
      { field: `nodeClassOverrides.kubelet.${field}`, message: expect.any(String) },
    ]);
  });

  it('accepts what the MCO accepts: matching cgroups, an empty staticPodPath, memorySwap without a behaviour', () => {
    for (const kubelet of [
      { systemReservedCgroup: '/system.slice', systemCgroups: '/system.slice' },
      { systemReservedCgroup: '/system.slice' },
      { staticPodPath: '' },
      { memorySwap: {} },
      { featureGates: {} },
    ]) {
      expect(() => validateKubeletForMachineConfig({ kubelet })).not.toThrow();
    }
  });

  it('refuses kubelet settings a KubeletConfig may not carry, naming the field', () => {
    expect(() =>
      validateKubeletForMachineConfig({ kubelet: { clusterDNS: ['10.0.0.10'], maxPods: 50 } }),
    ).toThrow(InvalidDesiredStateError);
    expect(() =>
      validateKubeletForMachineConfig({ kubelet: { clusterDNS: ['10.0.0.10'] } }),
    ).toThrow('nodeClassOverrides.kubelet.clusterDNS');
    // An empty list sets nothing; the MCO accepts it (len(ClusterDNS) > 0 is what it refuses).
    expect(() => validateKubeletForMachineConfig({ kubelet: { clusterDNS: [] } })).not.toThrow();
    expect(() => validateKubeletForMachineConfig({ kubelet: { maxPods: 50 } })).not.toThrow();
  });
});

describe('mergePatchTo', () => {
  it('nulls what only the live object has, recurses into maps, replaces the rest', () => {
    expect(
      mergePatchTo(
        { maxPods: 200, podsPerCore: 4, systemReserved: { cpu: '1', memory: '1Gi' } },
        { maxPods: 50, systemReserved: { cpu: '1' } },
      ),
    ).toEqual({ maxPods: 50, podsPerCore: null, systemReserved: { memory: null } });
    expect(mergePatchTo({ maxPods: 1 }, undefined)).toBeNull();
    expect(mergePatchTo(undefined, { maxPods: 1 })).toEqual({ maxPods: 1 });
  });
});

describe('machineConfigReadiness: may Karpenter launch from a NodeClass yet?', () => {
  const pool = (status: unknown) => ({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfigPool',
    metadata: { name: 'karpenter-gpu' },
    status,
  });
  const kubeletConfig = (conditions: unknown[]) => ({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'KubeletConfig',
    metadata: { name: 'karpenter-gpu', generation: 1 },
    status: { observedGeneration: 1, conditions },
  });
  const rendered = (sources: string[]) => ({
    configuration: { name: 'rendered-karpenter-gpu-1', source: sources.map((name) => ({ name })) },
  });
  const accepted = [
    { type: 'KubeletConfigAccepted', status: 'True', message: 'Success' },
    { type: 'Success', status: 'True', message: 'Success' },
  ];

  it('waits for the pool to be rendered: the MCS answers 500 until then', () => {
    expect(machineConfigReadiness('gpu', undefined, undefined)).toMatchObject({
      ready: false,
      reason: 'MachineConfigPoolNotRendered',
    });
    expect(machineConfigReadiness('gpu', pool({}), kubeletConfig(accepted))).toMatchObject({
      ready: false,
      reason: 'MachineConfigPoolNotRendered',
    });
  });

  it("waits until the rendered configuration holds the pool's KubeletConfig (the registration taint)", () => {
    expect(
      machineConfigReadiness(
        'gpu',
        pool(rendered(['00-worker', '97-karpenter-gpu-generated-kubelet'])),
        kubeletConfig(accepted),
      ),
    ).toMatchObject({ ready: false, reason: 'KubeletConfigNotRendered' });
    expect(
      machineConfigReadiness(
        'gpu',
        pool(rendered(['00-worker', '99-karpenter-gpu-generated-kubelet'])),
        kubeletConfig(accepted),
      ),
    ).toEqual({ ready: true });
    // A later KubeletConfig of the pool renders into a suffixed name.
    expect(
      machineConfigReadiness(
        'gpu',
        pool(rendered(['00-worker', '99-karpenter-gpu-generated-kubelet-1'])),
        kubeletConfig(accepted),
      ).ready,
    ).toBe(true);
  });

  it("stays closed while the KubeletConfig reports Failure, with the MCO's message", () => {
    const failed = kubeletConfig([
      ...accepted,
      {
        type: 'KubeletConfigAccepted',
        status: 'False',
        message:
          'Error: KubeletConfiguration: failSwapOn is not allowed to be set, but contains: true',
      },
      { type: 'Failure', status: 'True', message: 'Error: …' },
    ]);
    const readiness = machineConfigReadiness(
      'gpu',
      pool(rendered(['00-worker', '99-karpenter-gpu-generated-kubelet'])),
      failed,
    );
    expect(readiness).toMatchObject({ ready: false, reason: 'KubeletConfigFailure' });
    const message = readiness.ready ? '' : readiness.message;
    expect(message).toContain('failSwapOn is not allowed to be set');
    expect(message).toContain('KubeletConfig karpenter-gpu');
  });
});

describe("a Karpenter pool keeps the worker pool's kubelet settings", () => {
  // The MCO renders a custom pool's kubelet.conf from the worker templates alone and merges it
  // after the worker's own (template/render.go, common/helpers.go MergeMachineConfigs), and puts
  // the latency profile on role `worker` only: without this the pool's nodes lose them.
  const render = (kubelet?: Record<string, unknown>) =>
    renderNodeClassMachineConfig({
      nodeClass: 'gpu',
      nodeClassLabel: 'karpenter.k8s.aws/ec2nodeclass',
      workerUserData: worker,
      kubelet,
      worker: {
        kubeletConfig: { maxPods: 500, podsPerCore: 10, imageGCHighThresholdPercent: 80 },
        autoSizingReserved: true,
        logLevel: 4,
        workerLatencyProfile: 'MediumUpdateAverageReaction',
        from: ['set-max-pods'],
      },
    }).find((o) => o.kind === 'KubeletConfig') as unknown as {
      spec: {
        kubeletConfig: Record<string, unknown>;
        autoSizingReserved?: boolean;
        logLevel?: number;
      };
    };

  it('carries them under the desired settings, with the latency profile the workers have', () => {
    const kc = render({ maxPods: 50 });
    expect(kc.spec.kubeletConfig).toEqual({
      maxPods: 50,
      podsPerCore: 10,
      imageGCHighThresholdPercent: 80,
      nodeStatusUpdateFrequency: '20s',
      registerWithTaints: [
        { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' },
      ],
    });
    expect(kc.spec.autoSizingReserved).toBe(true);
    expect(kc.spec.logLevel).toBe(4);
    expect(kubeletConfigs.validate(kc).errors).toEqual([]);
  });

  it('leaves automatic sizing to the workers when desired state reserves system resources itself', () => {
    // The MCO refuses systemReserved with autoSizingReserved; the explicit reservation is the
    // one Karpenter computes capacity with.
    const kc = render({ systemReserved: { cpu: '500m', memory: '1Gi' } });
    expect(kc.spec.autoSizingReserved).toBeUndefined();
    expect(kc.spec.kubeletConfig.systemReserved).toEqual({ cpu: '500m', memory: '1Gi' });
  });
});

describe("customPoolOverlaps: NodePools whose nodes the cluster's own custom pools would claim too", () => {
  const LABEL = 'karpenter.k8s.aws/ec2nodeclass';
  const nodePool = (
    name: string,
    labels: Record<string, string>,
    requirements: unknown[] = [],
  ) => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        metadata: { labels },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements,
        },
      },
    },
  });
  const mcp = (name: string, nodeSelector: unknown, labels: Record<string, string> = {}) => ({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfigPool',
    metadata: { name, labels },
    spec: { nodeSelector },
  });
  const cluster = [
    mcp('worker', { matchLabels: { 'node-role.kubernetes.io/worker': '' } }),
    mcp('master', { matchLabels: { 'node-role.kubernetes.io/master': '' } }),
    mcp('infra', { matchLabels: { 'node-role.kubernetes.io/infra': '' } }),
    mcp('gpu', { matchExpressions: [{ key: 'team', operator: 'In', values: ['ml'] }] }),
    mcp('everything', {}),
    // The fleet's own pool is no overlap.
    mcp(
      'karpenter-default',
      { matchLabels: { [LABEL]: 'default' } },
      {
        'fleet.karpenter.sh/nodeclass': 'default',
      },
    ),
  ];

  it('names the NodePool, the pool and why, from template labels and single-valued requirements', () => {
    const overlaps = customPoolOverlaps(
      [
        nodePool('infra-nodes', { 'node-role.kubernetes.io/infra': '' }),
        nodePool('ml', {}, [{ key: 'team', operator: 'In', values: ['ml'] }]),
        nodePool('control', { 'node-role.kubernetes.io/master': '' }),
        nodePool('general', { team: 'web' }, [
          { key: 'team', operator: 'In', values: ['ml', 'web'] },
        ]),
      ],
      cluster,
      LABEL,
    );
    expect(overlaps.map((o) => [o.nodePool, o.pool])).toEqual([
      ['control', 'master'],
      ['infra-nodes', 'infra'],
      ['ml', 'gpu'],
    ]);
    expect(overlaps[1]!.message).toContain('belongs to 2 custom roles');
    expect(overlaps[1]!.message).toContain('karpenter-default');
    expect(overlaps[0]!.message).toContain('master pool');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { IgnitionFetchError } from '../support/machine-config-operator.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { eventually } from '../support/processes.js';
import { fixtureInfrastructure } from '../support/ocp-aws-standalone.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const MCO = 'machineconfiguration.openshift.io/v1';
const UNREGISTERED_TAINT = { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' };
const NODECLASS = ['karpenter.k8s.aws/v1', 'EC2NodeClass'] as const;
const WORKER_POINTER = fixtureInfrastructure().userData;
const pointerTo = (pool: string) => WORKER_POINTER.replace('/config/worker', `/config/${pool}`);

const GPU_NODEPOOL = {
  name: 'gpu',
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'gpu' },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      },
    },
  },
};

interface PoolStatus {
  machineCount?: number;
  updatedMachineCount?: number;
  degradedMachineCount?: number;
  configuration?: { name?: string; source?: { name: string }[] };
  conditions?: { type: string; status: string }[];
}

describe('standalone AWS: a MachineConfigPool per NodeClass', () => {
  let h: Harness;
  let sim: NodeLaunchSimulator;
  const created: string[] = [];
  let stopWatches: (() => void)[] = [];

  const kube = () => h.cluster.kube;
  const pool = (name: string) => kube().get(MCO, 'MachineConfigPool', name);
  const poolStatus = (name: string) => (pool(name)?.status ?? {}) as PoolStatus;
  const nodeClass = (name: string) =>
    kube().get(...NODECLASS, name)?.spec as { userData?: string; kubelet?: unknown } | undefined;
  const userNodeClass = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: NODECLASS[0],
    kind: NODECLASS[1],
    metadata: { name },
    spec: {
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: 'ami-0c6f2a5e3d1b7a901' }],
      role: 'gpu-role',
      subnetSelectorTerms: [{ id: 'subnet-0aa11111111111111' }],
      securityGroupSelectorTerms: [{ id: 'sg-0n0de000000000001' }],
      userData: WORKER_POINTER,
      ...spec,
    },
  });

  beforeAll(async () => {
    h = await startHarness();
    // Creation order of pools and NodeClasses, as an `oc get -w` would see it.
    stopWatches = [
      kube().watch(MCO, 'MachineConfigPool', (type, o) => {
        if (type === 'ADDED') created.push(`MachineConfigPool/${o.metadata?.name}`);
      }),
      kube().watch(...NODECLASS, (type, o) => {
        if (type === 'ADDED') created.push(`EC2NodeClass/${o.metadata?.name}`);
      }),
    ];
    sim = new NodeLaunchSimulator({
      kube: kube(),
      ec2: h.cluster.ec2,
      mco: h.cluster.mco!,
    }).start();
  });
  afterAll(async () => {
    for (const stop of stopWatches) stop();
    sim?.stop();
    await h?.stop();
  });

  it('enabling Karpenter creates karpenter-default with the right selectors before the NodeClass', async () => {
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'False',
    });
    kube().setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    expect(created.indexOf('MachineConfigPool/karpenter-default')).toBeGreaterThanOrEqual(0);
    expect(created.indexOf('MachineConfigPool/karpenter-default')).toBeLessThan(
      created.indexOf('EC2NodeClass/default'),
    );
    expect(pool('karpenter-default')?.spec).toEqual({
      machineConfigSelector: {
        matchExpressions: [
          {
            key: 'machineconfiguration.openshift.io/role',
            operator: 'In',
            values: ['worker', 'karpenter-default'],
          },
        ],
      },
      nodeSelector: { matchLabels: { 'karpenter.k8s.aws/ec2nodeclass': 'default' } },
    });
    // userData points at the pool: same host, port and CA bundle, kept in a Secret too.
    expect(nodeClass('default')?.userData).toBe(pointerTo('karpenter-default'));
    const secret = kube().get(
      'v1',
      'Secret',
      'karpenter-default-user-data',
      'openshift-machine-api',
    );
    const data = (secret as { data?: Record<string, string> } | undefined)?.data ?? {};
    expect(Buffer.from(data.userData ?? '', 'base64').toString()).toBe(
      pointerTo('karpenter-default'),
    );
    // The MCO rendered it from the worker MachineConfigs.
    await until(
      () => (poolStatus('karpenter-default').configuration?.name ? true : undefined),
      'karpenter-default rendered',
    );
    // The MCO rendered it from the worker MachineConfigs and the pool's generated kubelet
    // configuration (its KubeletConfig always exists: it carries the registration taint).
    await until(
      () =>
        poolStatus('karpenter-default').configuration?.source?.some(
          (s) => s.name === '99-karpenter-default-generated-kubelet',
        )
          ? true
          : undefined,
      'karpenter-default rendered with its KubeletConfig',
    );
    // The worker's own generated kubelet configuration (97-worker-…) is selected too, but the
    // pool's (99-karpenter-default-…) merges after it: the MCO merges worker-role MachineConfigs
    // first.
    expect(poolStatus('karpenter-default').configuration?.source?.map((s) => s.name)).toEqual([
      '00-worker',
      '97-worker-generated-kubelet',
      '99-karpenter-default-generated-kubelet',
      '99-worker-ssh',
    ]);
  });

  it('a launched node fetches /config/karpenter-default and joins that pool, never the workers', async () => {
    const node = await sim.launch('general');
    expect(node.booted).toMatchObject({
      pool: 'karpenter-default',
      renderedConfig: poolStatus('karpenter-default').configuration?.name,
    });
    // Its kubelet registered it with Karpenter's taint, so Karpenter registered it without
    // complaint (no UnregisteredTaintMissing) and lifted the taint.
    expect(node.booted?.kubeletConfig?.registerWithTaints).toEqual([UNREGISTERED_TAINT]);
    expect(
      kube()
        .list('v1', 'Event')
        .filter((e) => (e as { reason?: string }).reason === 'UnregisteredTaintMissing'),
    ).toEqual([]);
    expect(
      (kube().get('v1', 'Node', node.nodeName)?.spec as { taints?: { key: string }[] }).taints,
    ).not.toContainEqual(expect.objectContaining({ key: 'karpenter.sh/unregistered' }));
    expect(kube().get('v1', 'Node', node.nodeName)?.metadata?.labels).toMatchObject({
      'karpenter.k8s.aws/ec2nodeclass': 'default',
    });
    await until(
      () => (poolStatus('karpenter-default').updatedMachineCount === 1 ? true : undefined),
      'karpenter-default counts the node',
    );
    expect(poolStatus('karpenter-default')).toMatchObject({ machineCount: 1 });
    expect(poolStatus('worker').machineCount ?? 0).toBe(0);
  });

  it('a node booted from a wrong pointer never joins', async () => {
    const before = kube().list('v1', 'Node').length;
    const csrsBefore = kube().list('certificates.k8s.io/v1', 'CertificateSigningRequest').length;
    await expect(sim.launch('general', { userData: pointerTo('karpenter-nope') })).rejects.toThrow(
      IgnitionFetchError,
    );
    await expect(sim.launch('general', { userData: pointerTo('karpenter-nope') })).rejects.toThrow(
      'HTTP 500',
    );
    await expect(
      sim.launch('general', {
        userData: WORKER_POINTER.replace('api-int.prod-east.example.com', 'evil.example.com'),
      }),
    ).rejects.toThrow("is not this cluster's Machine Config Server");
    expect(kube().list('v1', 'Node')).toHaveLength(before);
    expect(kube().list('certificates.k8s.io/v1', 'CertificateSigningRequest')).toHaveLength(
      csrsBefore,
    );
  });

  it('a user NodeClass gets its own pool, and its tampered pointer is put back', async () => {
    kube().create(userNodeClass('gpu'), { fieldManager: 'kubectl-create' });
    await until(() => pool('karpenter-gpu'), 'MachineConfigPool karpenter-gpu');
    await until(
      () => (nodeClass('gpu')?.userData === pointerTo('karpenter-gpu') ? true : undefined),
      'gpu userData moved to its pool',
    );
    expect(created.indexOf('EC2NodeClass/gpu')).toBeLessThan(
      created.indexOf('MachineConfigPool/karpenter-gpu'),
    );
    const tamper = () =>
      kube().patch(...NODECLASS, 'gpu', undefined, { spec: { userData: pointerTo('worker') } });
    // The fleet's ValidatingAdmissionPolicy refuses the edit outright...
    expect(tamper).toThrow(/spec\.userData is set by the Karpenter fleet/);
    // ...and where it is not in force (a cluster-admin removed its binding), the sidecar puts
    // the pointer back.
    kube().delete(
      'admissionregistration.k8s.io/v1',
      'ValidatingAdmissionPolicyBinding',
      'karpenter-fleet-ec2nodeclass-enforced-fields',
    );
    tamper();
    await until(
      () => (nodeClass('gpu')?.userData === pointerTo('karpenter-gpu') ? true : undefined),
      'tampered gpu userData put back',
    );
  });

  it('nothing launches from a NodeClass before its pool and pointer are in place, nor from one that cannot get a pool', async () => {
    const nodePool = (name: string, nodeClassName: string) => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClassName },
            requirements: [],
          },
        },
      },
    });
    const instances = () => h.cluster.ec2.listInstances().length;
    // A cluster admin creates a NodeClass and its NodePool by hand; Karpenter tries to launch at
    // once, before the sidecar has seen either.
    kube().create(userNodeClass('batch'), { fieldManager: 'kubectl-create' });
    kube().create(nodePool('batch', 'batch'), { fieldManager: 'kubectl-create' });
    const before = instances();
    expect(() => sim.createNodeClaim('batch')).toThrow(
      /EC2NodeClass batch cannot launch nodes yet: the Karpenter fleet has not put its MachineConfigPool karpenter-batch/,
    );
    expect(instances()).toBe(before);
    // Once its pool exists and its pointer names it, Karpenter's next try launches, from that pool.
    const node = await sim.launch('batch');
    expect(pool('karpenter-batch')).toBeDefined();
    expect(node.booted?.pool).toBe('karpenter-batch');

    // A NodeClass whose pool name would be too long never gets a pool, and never launches.
    const long = `l${'o'.repeat(53)}ng`;
    kube().create(userNodeClass(long), { fieldManager: 'kubectl-create' });
    kube().create(nodePool('long', long), { fieldManager: 'kubectl-create' });
    await eventually(
      async () =>
        (await h.runtime.snapshot())?.conditions
          .find((c) => c.type === 'KarpenterPoolsDegraded')
          ?.message.includes(long)
          ? true
          : undefined,
      { timeoutMs: 10_000, intervalMs: 20, what: `KarpenterPoolsDegraded naming ${long}` },
    );
    expect(() => sim.createNodeClaim('long')).toThrow(
      `EC2NodeClass ${long} cannot launch nodes yet`,
    );
    expect(pool(`karpenter-${long}`)).toBeUndefined();
    kube().delete('karpenter.sh/v1', 'NodePool', 'long');
    kube().delete(...NODECLASS, long);
    await eventually(
      async () =>
        (await h.runtime.snapshot())?.conditions
          .find((c) => c.type === 'KarpenterPoolsDegraded')
          ?.message.includes(long)
          ? undefined
          : true,
      {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: `KarpenterPoolsDegraded no longer naming ${long}`,
      },
    );
  });

  it('the launch gate opens once the pool has rendered with its KubeletConfig, not when it is applied', async () => {
    // The render controller is slow today: the pool exists, the MCS would answer 500.
    const release = h.cluster.mco!.holdRendering('karpenter-slow');
    kube().create(userNodeClass('slow'), { fieldManager: 'kubectl-create' });
    kube().create(
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'slow' },
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'slow' },
              requirements: [],
            },
          },
        },
      },
      { fieldManager: 'kubectl-create' },
    );
    await until(
      () => (nodeClass('slow')?.userData === pointerTo('karpenter-slow') ? true : undefined),
      'slow userData moved to its pool',
    );
    await h.runtime.idle();
    expect(pool('karpenter-slow')).toBeDefined();
    expect(poolStatus('karpenter-slow').configuration?.name).toBeUndefined();
    expect(() => sim.createNodeClaim('slow')).toThrow('EC2NodeClass slow cannot launch nodes yet');
    release();
    const node = await sim.launch('slow');
    expect(node.booted?.pool).toBe('karpenter-slow');
    expect(node.booted?.kubeletConfig?.registerWithTaints).toEqual([UNREGISTERED_TAINT]);
  });

  it('a KubeletConfig the MCO refuses closes the gate and says why, until it is put right', async () => {
    // A cluster admin adds a setting the MCO refuses to the pool's KubeletConfig, under their
    // own field manager (the fleet's apply does not take it away).
    kube().patch(MCO, 'KubeletConfig', 'karpenter-slow', undefined, {
      spec: { kubeletConfig: { failSwapOn: true } },
    });
    const problem = await eventually(
      async () =>
        (await h.runtime.snapshot())?.conditions.find(
          (c) => c.type === 'KarpenterPoolsDegraded' && c.reason === 'KubeletConfigFailure',
        ),
      { timeoutMs: 10_000, intervalMs: 20, what: 'KarpenterPoolsDegraded KubeletConfigFailure' },
    );
    expect(problem.message).toContain('failSwapOn is not allowed to be set');
    expect(() => sim.createNodeClaim('slow')).toThrow('EC2NodeClass slow cannot launch nodes yet');
    kube().patch(MCO, 'KubeletConfig', 'karpenter-slow', undefined, {
      spec: { kubeletConfig: { failSwapOn: null } },
    });
    const node = await sim.launch('slow');
    expect(node.booted?.pool).toBe('karpenter-slow');
  });

  it('a MachineConfig labelled for the pool is selected by it and not by the workers', async () => {
    kube().create({
      apiVersion: MCO,
      kind: 'MachineConfig',
      metadata: {
        name: '50-karpenter-default-chrony',
        labels: { 'machineconfiguration.openshift.io/role': 'karpenter-default' },
      },
      spec: { config: { ignition: { version: '3.2.0' } } },
    });
    const sources = (name: string) =>
      poolStatus(name).configuration?.source?.map((s) => s.name) ?? [];
    await until(
      () =>
        sources('karpenter-default').includes('50-karpenter-default-chrony') ? true : undefined,
      'karpenter-default selects its MachineConfig',
    );
    expect(sources('worker')).not.toContain('50-karpenter-default-chrony');
    expect(sources('karpenter-gpu')).not.toContain('50-karpenter-default-chrony');
    // The pool's node moves to the new rendered configuration.
    await until(
      () => (poolStatus('karpenter-default').updatedMachineCount === 1 ? true : undefined),
      'node updated to the new rendered configuration',
    );
  });

  it("a kubelet setting in desired state yields each pool's KubeletConfig and the matching spec.kubelet", async () => {
    const kubelet = { maxPods: 50, systemReserved: { cpu: '500m', memory: '1Gi' } };
    await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL, GPU_NODEPOOL],
        nodeClassOverrides: { kubelet },
      }),
    );
    for (const name of ['default', 'gpu']) {
      const kc = await until(
        () => kube().get(MCO, 'KubeletConfig', `karpenter-${name}`),
        `KubeletConfig karpenter-${name}`,
      );
      expect(kc.spec).toEqual({
        machineConfigPoolSelector: {
          matchLabels: {
            [`pools.operator.machineconfiguration.openshift.io/karpenter-${name}`]: '',
          },
        },
        kubeletConfig: { ...kubelet, registerWithTaints: [UNREGISTERED_TAINT] },
      });
      await until(
        () =>
          JSON.stringify(nodeClass(name)?.kubelet) === JSON.stringify(kubelet) ? true : undefined,
        `${name} spec.kubelet`,
      );
    }
    // The MCO turned it into the pool's generated MachineConfig.
    await until(
      () =>
        poolStatus('karpenter-default').configuration?.source?.some(
          (s) => s.name === '99-karpenter-default-generated-kubelet',
        )
          ? true
          : undefined,
      'generated kubelet MachineConfig in karpenter-default',
    );
    // spec.kubelet set by hand is corrected, including a field the fleet never set.
    kube().patch(...NODECLASS, 'gpu', undefined, {
      spec: { kubelet: { maxPods: 300, podsPerCore: 2 } },
    });
    await until(
      () =>
        JSON.stringify(nodeClass('gpu')?.kubelet) === JSON.stringify(kubelet) ? true : undefined,
      'hand-set gpu spec.kubelet corrected',
    );
  });

  it("the worker pool's own KubeletConfig reaches the Karpenter pools' nodes too", async () => {
    // A cluster admin's KubeletConfig for the workers. The MCO renders a custom pool's
    // kubelet.conf from the worker templates alone and merges it after the worker's: without the
    // fleet carrying these, Karpenter nodes would run 250 pods and no automatic sizing.
    kube().create({
      apiVersion: MCO,
      kind: 'KubeletConfig',
      metadata: { name: 'set-max-pods' },
      spec: {
        machineConfigPoolSelector: {
          matchLabels: { 'pools.operator.machineconfiguration.openshift.io/worker': '' },
        },
        autoSizingReserved: true,
        kubeletConfig: { maxPods: 300, podsPerCore: 20 },
      },
    });
    await until(
      () =>
        poolStatus('worker').configuration?.source?.some(
          (s) => s.name === '99-worker-generated-kubelet',
        )
          ? true
          : undefined,
      'worker pool rendered with set-max-pods',
    );
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL, GPU_NODEPOOL] }));
    const kc = await until(() => {
      const spec = kube().get(MCO, 'KubeletConfig', 'karpenter-default')?.spec as
        { kubeletConfig?: { maxPods?: number }; autoSizingReserved?: boolean } | undefined;
      return spec?.kubeletConfig?.maxPods === 300 ? spec : undefined;
    }, "karpenter-default carries the worker's settings");
    expect(kc).toMatchObject({
      autoSizingReserved: true,
      kubeletConfig: { maxPods: 300, podsPerCore: 20, registerWithTaints: [UNREGISTERED_TAINT] },
    });
    const node = await sim.launch('general');
    expect(node.booted?.kubeletConfig).toMatchObject({ maxPods: 300, podsPerCore: 20 });
    expect(
      h.cluster.mco!.renderedFile(node.booted!.renderedConfig, '/etc/node-sizing-enabled.env'),
    ).toContain('NODE_SIZING_ENABLED=true');
    kube().delete(MCO, 'KubeletConfig', 'set-max-pods');
    // Karpenter takes the node away again (the next test counts the pool's nodes).
    kube().delete('karpenter.sh/v1', 'NodeClaim', node.nodeClaim);
    await until(
      () => (kube().get('v1', 'Node', node.nodeName) ? undefined : true),
      'the node gone with its NodeClaim',
    );
  });

  it("a NodePool whose nodes the cluster's own custom pool would claim too is reported, naming both", async () => {
    // The cluster's infra pool, as an administrator creates it.
    kube().create({
      apiVersion: MCO,
      kind: 'MachineConfigPool',
      metadata: { name: 'infra' },
      spec: {
        machineConfigSelector: {
          matchExpressions: [
            {
              key: 'machineconfiguration.openshift.io/role',
              operator: 'In',
              values: ['worker', 'infra'],
            },
          ],
        },
        nodeSelector: { matchLabels: { 'node-role.kubernetes.io/infra': '' } },
      },
    });
    kube().create(
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'infra-nodes' },
        spec: {
          template: {
            metadata: { labels: { 'node-role.kubernetes.io/infra': '' } },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [],
            },
          },
        },
      },
      { fieldManager: 'kubectl-create' },
    );
    const overlap = await eventually(
      async () =>
        (await h.runtime.snapshot())?.conditions.find(
          (c) => c.type === 'KarpenterPoolsDegraded' && c.reason === 'MachineConfigPoolOverlap',
        ),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: 'KarpenterPoolsDegraded MachineConfigPoolOverlap',
      },
    );
    expect(overlap.message).toContain('NodePool infra-nodes');
    expect(overlap.message).toContain('MachineConfigPool infra');
    expect(overlap.message).toContain('belongs to 2 custom roles');
    kube().delete('karpenter.sh/v1', 'NodePool', 'infra-nodes');
    await eventually(
      async () =>
        (await h.runtime.snapshot())?.conditions.find(
          (c) => c.type === 'KarpenterPoolsDegraded' && c.reason === 'MachineConfigPoolOverlap',
        )
          ? undefined
          : true,
      { timeoutMs: 10_000, intervalMs: 20, what: 'no MachineConfigPoolOverlap' },
    );
  });

  it('a Degraded pool is reported per NodeClass and in the KarpenterPoolsDegraded condition', async () => {
    const [node] = kube().list('v1', 'Node', undefined, {
      labelSelector: 'karpenter.k8s.aws/ec2nodeclass=default',
    });
    // The machine-config daemon first finishes any update it has begun on the node: its last
    // step writes state Done, which would overwrite the Degraded state set here.
    await eventually(
      () => {
        const ann = kube().get('v1', 'Node', node!.metadata!.name!)?.metadata?.annotations ?? {};
        return ann['machineconfiguration.openshift.io/state'] === 'Done' &&
          ann['machineconfiguration.openshift.io/currentConfig'] ===
            ann['machineconfiguration.openshift.io/desiredConfig']
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 20, what: 'the node at its desired configuration' },
    );
    kube().patch('v1', 'Node', node!.metadata!.name!, undefined, {
      metadata: {
        annotations: {
          'machineconfiguration.openshift.io/state': 'Degraded',
          'machineconfiguration.openshift.io/reason': 'unexpected on-disk state',
        },
      },
    });
    const snapshot = await eventually(
      async () => {
        const s = await h.runtime.snapshot();
        return s?.conditions.find((c) => c.type === 'KarpenterPoolsDegraded')?.status === 'True'
          ? s
          : undefined;
      },
      // The emulated MCO's node sync, the pool's status and the sidecar's report in turn: on a
      // loaded 2-core CI machine (a full npm test) that took over 10 s once.
      { timeoutMs: 30_000, intervalMs: 20, what: 'KarpenterPoolsDegraded True' },
    );
    expect(snapshot.conditions.find((c) => c.type === 'KarpenterPoolsDegraded')).toMatchObject({
      reason: 'MachineConfigPoolDegraded',
      message: expect.stringContaining('karpenter-default') as unknown as string,
    });
    const state = snapshot.machineConfigPools?.find((p) => p.name === 'karpenter-default');
    expect(state).toMatchObject({
      nodeClass: 'default',
      machineCount: 1,
      degradedMachineCount: 1,
      updatedMachineCount: 0,
      renderedConfig: expect.stringMatching(/^rendered-karpenter-default-/) as unknown as string,
    });
    expect(state?.conditions.find((c) => c.type === 'Degraded')?.status).toBe('True');
    kube().patch('v1', 'Node', node!.metadata!.name!, undefined, {
      metadata: { annotations: { 'machineconfiguration.openshift.io/state': 'Done' } },
    });
  });

  it('removing a NodeClass removes its pool only after its nodes are gone', async () => {
    const node = await sim.launch('gpu');
    expect(node.booted?.pool).toBe('karpenter-gpu');
    // Keep the NodeClass deleted: the fleet's NodePool for it goes first.
    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], nodeClassOverrides: {} }),
    );
    kube().delete(...NODECLASS, 'gpu');
    await until(() => (nodeClass('gpu') ? undefined : true), 'gpu NodeClass gone');
    await h.runtime.idle();
    expect(pool('karpenter-gpu')).toBeDefined();
    kube().delete('v1', 'Node', node.nodeName);
    await until(() => (pool('karpenter-gpu') ? undefined : true), 'karpenter-gpu pruned');
    expect(
      kube().get('v1', 'Secret', 'karpenter-gpu-user-data', 'openshift-machine-api'),
    ).toBeUndefined();
    expect(pool('karpenter-default')).toBeDefined();
    // The kubelet settings went away with the order: the remaining pools' KubeletConfigs carry
    // nothing but the registration taint, and karpenter-gpu's went with its pool.
    const left = await until(() => {
      const kcs = kube().list(MCO, 'KubeletConfig');
      return kcs.length === 3 &&
        kcs.every(
          (kc) => !(kc.spec as { kubeletConfig?: { maxPods?: number } }).kubeletConfig?.maxPods,
        )
        ? kcs
        : undefined;
    }, "karpenter-gpu's KubeletConfig gone, the others without the order's settings");
    expect(left.map((kc) => kc.metadata?.name).sort()).toEqual([
      'karpenter-batch',
      'karpenter-default',
      'karpenter-slow',
    ]);
    for (const kc of left) {
      expect(kc.spec).toEqual({
        machineConfigPoolSelector: {
          matchLabels: {
            [`pools.operator.machineconfiguration.openshift.io/${kc.metadata?.name}`]: '',
          },
        },
        kubeletConfig: { registerWithTaints: [UNREGISTERED_TAINT] },
      });
    }
  });

  it('a worker user data that is no Ignition pointer is Degraded with its own reason, and nothing is written', async () => {
    const rv = kube().get(...NODECLASS, 'default')?.metadata?.resourceVersion;
    kube().patch('v1', 'Secret', 'worker-user-data', 'openshift-machine-api', {
      data: { userData: Buffer.from('#cloud-config\n').toString('base64') },
    });
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'IgnitionPointerInvalid',
      message: expect.stringContaining('karpenter-default') as unknown as string,
    });
    expect(kube().get(...NODECLASS, 'default')?.metadata?.resourceVersion).toBe(rv);
  });
});

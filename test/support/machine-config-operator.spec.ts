import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CRDS_DIR, fixtureClusterDir } from './fixtures.js';
import { KubeApiServerEmulator, type KubeObject } from './kube-apiserver/index.js';
import {
  ignitionVersionFor,
  KUBELET_CONF,
  MachineConfigOperatorEmulator,
} from './machine-config-operator.js';
import { eventually } from './processes.js';

// The emulated MCO against what openshift/machine-config-operator 7ff337a4 does (the parity
// table in machine-config-operator.README.md names the upstream file of each behaviour).

const MCO = 'machineconfiguration.openshift.io/v1';
const WORKER_FIXTURE = fixtureClusterDir('ocp-aws-standalone');
const ENDPOINT = 'https://api-int.example.com:22623';

describe('emulated Machine Config Operator', () => {
  let kube: KubeApiServerEmulator;
  let mco: MachineConfigOperatorEmulator;

  const until = <T>(fn: () => T | undefined, what: string) =>
    eventually(() => Promise.resolve(fn()), { timeoutMs: 5_000, intervalMs: 5, what });
  const pool = (name: string) => kube.get(MCO, 'MachineConfigPool', name);
  const status = (name: string) =>
    (pool(name)?.status ?? {}) as {
      configuration?: { name?: string; source?: { name: string }[] };
      machineCount?: number;
      updatedMachineCount?: number;
      conditions?: { type: string; status: string; message: string }[];
    };
  const condition = (name: string, type: string) =>
    status(name).conditions?.find((c) => c.type === type);
  const node = (name: string, labels: Record<string, string>) =>
    kube.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
  const customPool = (name: string, nodeSelector: unknown, extra: object = {}) =>
    kube.create({
      apiVersion: MCO,
      kind: 'MachineConfigPool',
      metadata: {
        name,
        labels: { [`pools.operator.machineconfiguration.openshift.io/${name}`]: '' },
      },
      spec: {
        machineConfigSelector: {
          matchExpressions: [
            {
              key: 'machineconfiguration.openshift.io/role',
              operator: 'In',
              values: ['worker', name],
            },
          ],
        },
        nodeSelector,
        ...extra,
      },
    });
  const kubeletConfig = (name: string, pool: string, spec: object) =>
    kube.create({
      apiVersion: MCO,
      kind: 'KubeletConfig',
      metadata: { name },
      spec: {
        machineConfigPoolSelector: {
          matchLabels: { [`pools.operator.machineconfiguration.openshift.io/${pool}`]: '' },
        },
        ...spec,
      },
    });
  const kcConditions = (name: string) =>
    (
      (kube.get(MCO, 'KubeletConfig', name)?.status ?? {}) as {
        conditions?: { type: string; status: string; message: string }[];
      }
    ).conditions ?? [];
  const kubeletConf = (rendered: string) =>
    JSON.parse(mco.renderedFile(rendered, KUBELET_CONF) ?? '{}') as Record<string, unknown>;

  beforeAll(async () => {
    kube = new KubeApiServerEmulator();
    await kube.start();
    for (const crd of ['kubeletconfigs', 'machineconfigpools', 'machineconfigs']) {
      kube.addCrd(
        parse(
          readFileSync(
            join(CRDS_DIR, 'openshift', `machineconfiguration.openshift.io_${crd}.yaml`),
            'utf8',
          ),
        ) as Record<string, unknown>,
      );
    }
    kube.addCrd(
      parse(
        readFileSync(join(CRDS_DIR, 'openshift', 'config.openshift.io_nodes.yaml'), 'utf8'),
      ) as Record<string, unknown>,
    );
    kube.seed(
      [
        'machineconfigpool-worker.yaml',
        'machineconfigpool-master.yaml',
        'machineconfig-00-worker.yaml',
        'machineconfig-00-master.yaml',
      ].map((f) => parse(readFileSync(join(WORKER_FIXTURE, f), 'utf8')) as KubeObject),
    );
    mco = new MachineConfigOperatorEmulator(kube, ENDPOINT, '[]', { rolloutStepMs: 15 });
    await mco.start();
  });
  afterAll(async () => {
    await mco?.stop();
    await kube?.stop();
  });

  it("renders every pool's whole kubelet.conf from the worker templates, custom pools' merged last", async () => {
    customPool('infra', { matchLabels: { 'node-role.kubernetes.io/infra': '' } });
    const rendered = await until(() => status('infra').configuration?.name, 'infra rendered');
    // A pool created after the controller started gets no 97- MachineConfig of its own until the
    // cluster's node settings change (no pool handler in kubelet_config_nodes.go).
    expect(status('infra').configuration?.source?.map((s) => s.name)).toEqual([
      '00-worker',
      '97-worker-generated-kubelet',
    ]);
    expect(kubeletConf(rendered)).toMatchObject({
      kind: 'KubeletConfiguration',
      maxPods: 250,
      clusterDomain: 'cluster.local',
      systemReservedCgroup: '/system.slice',
    });
  });

  it('puts the worker latency profile on role worker only, when the node settings change', async () => {
    kube.create({
      apiVersion: 'config.openshift.io/v1',
      kind: 'Node',
      metadata: { name: 'cluster' },
      spec: { workerLatencyProfile: 'MediumUpdateAverageReaction' },
    });
    const generated = (name: string) => {
      const mc = kube.get(MCO, 'MachineConfig', name)?.spec as
        { config: { storage: { files: { contents: { source: string } }[] } } } | undefined;
      const source = mc?.config.storage.files[0]?.contents.source;
      return source
        ? (JSON.parse(decodeURIComponent(source.replace(/^data:,/, ''))) as Record<string, unknown>)
        : undefined;
    };
    await until(
      () =>
        generated('97-worker-generated-kubelet')?.nodeStatusUpdateFrequency === '20s'
          ? true
          : undefined,
      'the profile on 97-worker-generated-kubelet',
    );
    // Now the infra pool has its own, from the worker templates, without the profile.
    expect(generated('97-infra-generated-kubelet')?.nodeStatusUpdateFrequency).toBe('10s');
  });

  it('validates KubeletConfigs as the MCO does and reports it in their status', async () => {
    kubeletConfig('refused', 'infra', { kubeletConfig: { failSwapOn: true, maxPods: 100 } });
    await until(() => (kcConditions('refused').length ? true : undefined), 'refused status');
    expect(kcConditions('refused')).toEqual([
      expect.objectContaining({
        type: 'KubeletConfigAccepted',
        status: 'False',
        message:
          'Error: KubeletConfiguration: failSwapOn is not allowed to be set, but contains: true',
      }),
      expect.objectContaining({ type: 'Failure', status: 'True' }),
    ]);
    // A failed KubeletConfig holds back every pool it selects: nothing new renders.
    const before = status('infra').configuration?.name;
    kube.create({
      apiVersion: MCO,
      kind: 'MachineConfig',
      metadata: {
        name: '50-infra-chrony',
        labels: { 'machineconfiguration.openshift.io/role': 'infra' },
      },
      spec: { config: { ignition: { version: '3.2.0' } } },
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(status('infra').configuration?.name).toBe(before);
    kube.delete(MCO, 'KubeletConfig', 'refused');

    kubeletConfig('infra-pods', 'infra', {
      kubeletConfig: { maxPods: 100, systemReserved: { cpu: '1', memory: '2Gi' } },
    });
    const rendered = await until(() => {
      const c = status('infra').configuration;
      return c?.source?.some((s) => s.name === '99-infra-generated-kubelet') ? c.name : undefined;
    }, 'infra rendered with its KubeletConfig');
    expect(kcConditions('infra-pods').map((c) => [c.type, c.status, c.message])).toEqual([
      ['KubeletConfigAccepted', 'True', 'Success'],
      ['Success', 'True', 'Success'],
    ]);
    // The generated MachineConfig holds the whole kubelet.conf, the KubeletConfig over the
    // template; reserved cpu and memory go to the node-sizing file instead.
    expect(kubeletConf(rendered)).toMatchObject({ maxPods: 100, clusterDomain: 'cluster.local' });
    expect(mco.renderedFile(rendered, '/etc/node-sizing-enabled.env')).toBe(
      'NODE_SIZING_ENABLED=false\nSYSTEM_RESERVED_MEMORY=2Gi\nSYSTEM_RESERVED_CPU=1\nSYSTEM_RESERVED_ES=1Gi\n',
    );
  });

  it.each([
    [{ cgroupDriver: 'cgroupfs' }, 'cgroupDriver is not allowed to be set'],
    [{ clusterDNS: ['10.0.0.10'] }, 'clusterDNS is not allowed to be set'],
    [{ clusterDomain: 'example.org' }, 'clusterDomain is not allowed to be set'],
    [{ featureGates: { Foo: true } }, 'featureGates is not allowed to be set'],
    [{ memorySwap: { swapBehavior: 'LimitedSwap' } }, 'swapBehavior is not allowed to be set'],
    [{ systemReservedCgroup: '/a', systemCgroups: '/b' }, 'must match systemCgroups'],
    [{ staticPodPath: '/etc/static' }, 'staticPodPath must be empty for pool "infra"'],
  ])('refuses %j', async (settings, message) => {
    const name = `kc-${Object.keys(settings)[0]!.toLowerCase()}`;
    kubeletConfig(name, 'infra', { kubeletConfig: settings });
    const conditions = await until(
      () => (kcConditions(name).length ? kcConditions(name) : undefined),
      `${name} status`,
    );
    expect(conditions[0]?.message).toContain(message);
    expect(conditions.at(-1)?.type).toBe('Failure');
    kube.delete(MCO, 'KubeletConfig', name);
  });

  it('refuses systemReserved together with autoSizingReserved', async () => {
    kubeletConfig('auto', 'infra', {
      autoSizingReserved: true,
      kubeletConfig: { systemReserved: { memory: '1Gi' } },
    });
    const conditions = await until(
      () => (kcConditions('auto').length ? kcConditions('auto') : undefined),
      'auto status',
    );
    expect(conditions[0]?.message).toBe(
      'Error: KubeletConfiguration: autoSizingReserved and systemdReserved cannot be set together',
    );
    kube.delete(MCO, 'KubeletConfig', 'auto');
  });

  it('puts a node in two custom pools in none (an error), custom plus master in master, and an empty selector matches nothing', async () => {
    customPool('gpu', { matchLabels: { gpu: 'true' } });
    customPool('everything', {});
    node('both', {
      'node-role.kubernetes.io/worker': '',
      'node-role.kubernetes.io/infra': '',
      gpu: 'true',
    });
    node('cp', { 'node-role.kubernetes.io/master': '', 'node-role.kubernetes.io/infra': '' });
    node('plain', { 'node-role.kubernetes.io/worker': '' });
    await until(
      () => (status('worker').machineCount === 1 ? true : undefined),
      'worker counts plain',
    );
    await until(() => (status('master').machineCount === 1 ? true : undefined), 'master counts cp');
    expect(status('infra').machineCount).toBe(0);
    expect(status('gpu').machineCount).toBe(0);
    expect(status('everything').machineCount).toBe(0);
    expect(mco.unmanagedNodes()).toEqual([
      {
        node: 'both',
        message: 'node both belongs to 2 custom roles, cannot proceed with this Node',
      },
    ]);
    expect(
      kube.get('v1', 'Node', 'both')?.metadata?.annotations?.[
        'machineconfiguration.openshift.io/desiredConfig'
      ],
    ).toBeUndefined();
    for (const n of ['both', 'cp', 'plain']) kube.delete('v1', 'Node', n);
    kube.delete(MCO, 'MachineConfigPool', 'gpu');
  });

  it('marks a pool selecting no MachineConfigs RenderDegraded', async () => {
    kube.create({
      apiVersion: MCO,
      kind: 'MachineConfigPool',
      metadata: { name: 'lonely' },
      spec: {
        machineConfigSelector: {
          matchLabels: { 'machineconfiguration.openshift.io/role': 'nobody' },
        },
        nodeSelector: { matchLabels: { lonely: 'true' } },
      },
    });
    // Its own 97-lonely-generated-kubelet carries role lonely: select a role nothing has.
    const c = await until(
      () =>
        condition('lonely', 'RenderDegraded')?.status === 'True'
          ? condition('lonely', 'RenderDegraded')
          : undefined,
      'lonely RenderDegraded',
    );
    expect(c?.message).toBe(
      'Failed to render configuration for pool lonely: no MachineConfigs found matching selector machineconfiguration.openshift.io/role=nobody',
    );
    expect(condition('lonely', 'Degraded')?.status).toBe('True');
    expect(status('lonely').configuration).toBeUndefined();
  });

  it('rolls a new configuration out within maxUnavailable: cordon, drain, reboot, one node at a time', async () => {
    for (const n of ['w1', 'w2', 'w3']) node(n, { 'node-role.kubernetes.io/worker': '' });
    await until(
      () => (status('worker').updatedMachineCount === 3 ? true : undefined),
      'workers updated',
    );
    mco.rollout.splice(0);
    kube.create({
      apiVersion: MCO,
      kind: 'MachineConfig',
      metadata: {
        name: '50-worker-motd',
        labels: { 'machineconfiguration.openshift.io/role': 'worker' },
      },
      spec: { config: { ignition: { version: '3.2.0' } } },
    });
    let most = 0;
    await until(() => {
      const working = kube
        .list('v1', 'Node')
        .filter((n) => ['w1', 'w2', 'w3'].includes(n.metadata!.name!))
        .filter((n) => (n.spec as { unschedulable?: boolean } | undefined)?.unschedulable).length;
      most = Math.max(most, working);
      return mco.rollout.filter((s) => s.step === 'done').length === 3 ? true : undefined;
    }, 'three nodes updated');
    expect(most).toBe(1);
    expect(mco.rollout.map((s) => `${s.node}:${s.step}`)).toEqual(
      ['w1', 'w2', 'w3'].flatMap((n) =>
        ['cordon', 'drain', 'reboot', 'done'].map((s) => `${n}:${s}`),
      ),
    );
    await until(
      () => (condition('worker', 'Updated')?.status === 'True' ? true : undefined),
      'Updated',
    );
  });

  it('answers 400 to an Ignition version it cannot serve, 405 to anything but GET and HEAD', async () => {
    expect(
      ignitionVersionFor('application/vnd.coreos.ignition+json;version=3.2.0, */*;q=0.1'),
    ).toBe('3.2.0');
    expect(ignitionVersionFor('application/vnd.coreos.ignition+json;version=3.9.0')).toBe('3.5.0');
    expect(
      ignitionVersionFor('application/vnd.coreos.ignition+json;version=4.0.0'),
    ).toBeUndefined();
    expect(
      ignitionVersionFor('application/vnd.coreos.ignition+json;version=2.1.0'),
    ).toBeUndefined();
    // What the MCS cannot parse at all, or a plain curl, gets spec 2.2 (as upstream).
    expect(ignitionVersionFor('garbage')).toBe('2.2.0');
    expect(ignitionVersionFor('')).toBe('2.2.0');
    const get = (accept: string, method = 'GET') =>
      fetch(`${mco.url}/config/worker`, { method, headers: { Accept: accept } });
    expect((await get('application/vnd.coreos.ignition+json;version=4.0.0')).status).toBe(400);
    expect((await get('application/vnd.coreos.ignition+json;version=3.2.0', 'POST')).status).toBe(
      405,
    );
    const ok = await get('application/vnd.coreos.ignition+json;version=3.2.0');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { ignition: { version: string } }).ignition.version).toBe('3.2.0');
    expect((await fetch(`${mco.url}/config/nope`)).status).toBe(500);
  });
});

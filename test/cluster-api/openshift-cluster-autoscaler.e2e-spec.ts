import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CAPI_OPERAND_NAME,
  CAPI_OPERAND_NAMESPACE,
  NODE_GROUP_SIZES_BACKUP,
  type KubeObject as StoredObject,
} from '@fleet/cloud-provider';
import { join } from 'node:path';
import {
  BACKUP_CONFIG_MAP_NAME,
  portableCopy,
} from '../../apps/sidecar/src/cluster-autoscaler/cluster-autoscaler.js';
import { OPENSHIFT_CLUSTER_API, upstreamCrdFiles } from '../support/capi-aws-workload.js';
import { fixtureClusterDir } from '../support/fixtures.js';
import { readYamlFile, type KubeObject } from '../support/kube-apiserver/index.js';
import { GENERAL_NODEPOOL, startCapiHarness, type CapiHarness } from './harness.js';
import { ClusterApiProviderSimulator } from './provider-simulator.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NS = OPENSHIFT_CLUSTER_API.namespace;
const OWNED = 'fleet.karpenter.sh/managed-by';
const CA = ['autoscaling.openshift.io/v1', 'ClusterAutoscaler'] as const;
const MA = ['autoscaling.openshift.io/v1beta1', 'MachineAutoscaler'] as const;
const MACHINE_API = 'openshift-machine-api';

/** OpenShift's ClusterAutoscaler/default and its MachineAutoscalers, as a real cluster has them. */
const openShiftAutoscalers = (): KubeObject[] => {
  const dir = fixtureClusterDir('ocp-aws-standalone');
  return [
    'clusterautoscaler-default.yaml',
    'machineautoscaler-worker-us-east-1a.yaml',
    'machineautoscaler-worker-us-east-1b.yaml',
    'machineautoscaler-worker-us-east-1c.yaml',
  ].flatMap((f) => readYamlFile(join(dir, f)));
};

/**
 * OpenShift's own Cluster API with the Cluster Autoscaler configured both ways at once: OpenShift's
 * ClusterAutoscaler/MachineAutoscaler objects and the Cluster API node-group size annotations on
 * the worker MachineDeployments in openshift-cluster-api, all on the one API server. DISABLE
 * takes both out of play, KEEP gives both back exactly, MIGRATE runs both and says so, and the
 * report names the kinds found.
 */
describe("Cluster API on OpenShift's own Cluster API: ClusterAutoscaler, MachineAutoscalers and the node-group size annotations together", () => {
  let h: CapiHarness;
  let provider: ClusterApiProviderSimulator;
  let originalAnnotations: Record<string, Record<string, string> | undefined>;
  let originalObjects: StoredObject[];
  const kube = () => h.pair.workload;
  const workerAnnotations = () =>
    Object.fromEntries(
      [...kube().list(V1B1, 'MachineDeployment', NS), ...kube().list(V1B1, 'MachineSet', NS)]
        .filter((g) => !g.metadata?.labels?.[OWNED])
        .map((g) => [`${g.kind}/${g.metadata?.name}`, g.metadata?.annotations]),
    );
  /** The OpenShift objects as their owner wrote them (server-set fields dropped). */
  const liveOpenShiftAutoscalers = () =>
    [...kube().list(...CA), ...kube().list(...MA, MACHINE_API)]
      .map((o) => portableCopy(o as StoredObject))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const condition = (type: string) =>
    h.runtime.lastResult()?.result.conditions.find((c) => c.type === type);
  const state = () => h.runtime.lastResult()?.result.clusterAutoscaler;
  const order = (clusterAutoscalerMode: 'DISABLE' | 'KEEP' | 'MIGRATE') =>
    h.order({ enabled: true, clusterAutoscalerMode, nodePools: [GENERAL_NODEPOOL] });

  beforeAll(async () => {
    h = await startCapiHarness({
      openshift: true,
      beforeStart: (pair) => {
        pair.workload.loadCrdFiles(
          upstreamCrdFiles('openshift', (f) => f.startsWith('autoscaling.openshift.io_')),
        );
        pair.workload.seed([
          ...[MACHINE_API, 'openshift-config'].map((name) => ({
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name },
          })),
          ...openShiftAutoscalers(),
        ]);
      },
    });
    provider = new ClusterApiProviderSimulator(h.pair);
    originalAnnotations = workerAnnotations();
    // As the API server stored them (the CRDs' defaults applied).
    originalObjects = liveOpenShiftAutoscalers();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('before Karpenter is ready both stay, and the report names the kinds the Cluster Autoscaler is configured through', async () => {
    expect(originalObjects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(
      openShiftAutoscalers().map((o) => `${o.kind}/${o.metadata?.name}`),
    );
    await h.runtime.apply(order('DISABLE'));
    expect(condition('Degraded')).toMatchObject({ status: 'False' });
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'False',
      reason: 'WaitingForKarpenter',
    });
    expect(liveOpenShiftAutoscalers()).toHaveLength(4);
    expect(workerAnnotations()).toEqual(originalAnnotations);
    await h.runtime.apply(order('KEEP'));
    expect(state()).toMatchObject({
      mode: 'KEEP',
      observed: 'Present',
      observedKinds: ['ClusterAutoscaler', 'MachineAutoscaler', 'MachineDeployment'],
    });
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'False',
      reason: 'ClusterAutoscalerActive',
      message: expect.stringMatching(
        /ClusterAutoscaler\/default .*; the Cluster Autoscaler manages/,
      ),
    });
  });

  it('DISABLE, once Karpenter is ready, removes ClusterAutoscaler/default, every MachineAutoscaler and the size annotations, keeping exact copies', async () => {
    kube().setDeploymentAvailable(CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    provider.markNodeClassReady();
    await h.runtime.apply(order('DISABLE'));
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'True',
      reason: 'DisabledByFleet',
    });
    expect(state()).toMatchObject({ mode: 'DISABLE', observed: 'Removed', observedKinds: [] });
    expect(liveOpenShiftAutoscalers()).toEqual([]);
    const sizes = [
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size',
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size',
    ];
    expect(
      Object.values(workerAnnotations()).filter((a) => sizes.some((s) => a?.[s] !== undefined)),
    ).toEqual([]);
    expect(kube().get('v1', 'ConfigMap', BACKUP_CONFIG_MAP_NAME, 'openshift-config')).toBeDefined();
    expect(kube().get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS)).toBeDefined();
  });

  it('KEEP restores both exactly: the OpenShift objects as they were written, every annotation', async () => {
    await h.runtime.apply(order('KEEP'));
    expect(liveOpenShiftAutoscalers()).toEqual(originalObjects);
    expect(workerAnnotations()).toEqual(originalAnnotations);
    expect(
      kube().get('v1', 'ConfigMap', BACKUP_CONFIG_MAP_NAME, 'openshift-config'),
    ).toBeUndefined();
    expect(kube().get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS)).toBeUndefined();
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'False',
      reason: 'ClusterAutoscalerActive',
    });
  });

  it('MIGRATE after DISABLE gives both back and says that both autoscalers run beside Karpenter', async () => {
    await h.runtime.apply(order('DISABLE'));
    expect(liveOpenShiftAutoscalers()).toEqual([]);
    await h.runtime.apply(order('MIGRATE'));
    expect(liveOpenShiftAutoscalers()).toEqual(originalObjects);
    expect(workerAnnotations()).toEqual(originalAnnotations);
    expect(condition('ClusterAutoscalerMigration')).toMatchObject({
      status: 'True',
      reason: 'BothAutoscalersActive',
      message: expect.stringMatching(
        /ClusterAutoscaler\/default is running with 3 MachineAutoscaler\(s\); the Cluster Autoscaler manages \d+ worker group/,
      ),
    });
    expect(state()).toMatchObject({
      mode: 'MIGRATE',
      observed: 'Present',
      observedKinds: ['ClusterAutoscaler', 'MachineAutoscaler', 'MachineDeployment'],
    });
  });
});

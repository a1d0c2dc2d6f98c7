import { describe, expect, it } from '@jest/globals';
import { InMemoryClusterObjectReader } from '../cluster-reader.js';
import { readWorkerKubelet } from './worker-kubelet.js';

const MCO = 'machineconfiguration.openshift.io/v1';
const workerPool = {
  apiVersion: MCO,
  kind: 'MachineConfigPool',
  metadata: {
    name: 'worker',
    labels: { 'pools.operator.machineconfiguration.openshift.io/worker': '' },
  },
};
const accepted = {
  observedGeneration: 1,
  conditions: [{ type: 'KubeletConfigAccepted', status: 'True', message: 'Success' }],
};
const kc = (
  name: string,
  selector: Record<string, string>,
  spec: Record<string, unknown>,
  extra: { suffix?: string; status?: unknown; created?: string } = {},
) => ({
  apiVersion: MCO,
  kind: 'KubeletConfig',
  metadata: {
    name,
    generation: 1,
    creationTimestamp: extra.created ?? '2026-01-01T00:00:00Z',
    ...(extra.suffix !== undefined
      ? { annotations: { 'machineconfiguration.openshift.io/mc-name-suffix': extra.suffix } }
      : {}),
  },
  spec: { machineConfigPoolSelector: { matchLabels: selector }, ...spec },
  status: extra.status ?? accepted,
});
const WORKER = { 'pools.operator.machineconfiguration.openshift.io/worker': '' };

describe("readWorkerKubelet: the worker pool's kubelet settings", () => {
  it('merges the accepted KubeletConfigs of the worker pool in the order the MCO renders them, with the latency profile', async () => {
    const reader = new InMemoryClusterObjectReader([
      workerPool,
      kc('second', WORKER, { kubeletConfig: { maxPods: 300 }, logLevel: 4 }, { suffix: '1' }),
      kc(
        'first',
        WORKER,
        { kubeletConfig: { maxPods: 200, podsPerCore: 10 }, autoSizingReserved: true },
        { suffix: '' },
      ),
      // Refused by the MCO: the workers do not run it.
      kc(
        'refused',
        WORKER,
        { kubeletConfig: { failSwapOn: true } },
        {
          status: {
            observedGeneration: 1,
            conditions: [{ type: 'KubeletConfigAccepted', status: 'False', message: 'Error: …' }],
          },
        },
      ),
      // Another pool's.
      kc(
        'infra',
        { 'pools.operator.machineconfiguration.openshift.io/infra': '' },
        {
          kubeletConfig: { maxPods: 10 },
        },
      ),
      {
        apiVersion: 'config.openshift.io/v1',
        kind: 'Node',
        metadata: { name: 'cluster' },
        spec: { workerLatencyProfile: 'LowUpdateSlowReaction' },
      },
    ]);
    expect(await readWorkerKubelet(reader)).toEqual({
      kubeletConfig: { maxPods: 300, podsPerCore: 10 },
      autoSizingReserved: true,
      logLevel: 4,
      workerLatencyProfile: 'LowUpdateSlowReaction',
      from: ['first', 'second'],
    });
  });

  it('is empty on a cluster with neither', async () => {
    expect(await readWorkerKubelet(new InMemoryClusterObjectReader([workerPool]))).toEqual({
      kubeletConfig: {},
      from: [],
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import { CONTRACT_VERSION, type ReconcileOrder } from '@fleet/contracts';
import { supportedPairs } from '@fleet/cloud-provider';
import { pino } from 'pino';
import { SidecarHost } from './sidecar-host.js';

const order = (over: Partial<ReconcileOrder> = {}): ReconcileOrder => ({
  contractVersion: CONTRACT_VERSION,
  clusterId: '00000000-0000-4000-8000-000000000001',
  generation: 3,
  platform: 'AWS',
  topology: 'STANDALONE',
  spec: {
    enabled: true,
    paused: false,
    clusterAutoscalerMode: 'KEEP',
    logLevel: 'info',
    featureGates: {},
    nodePools: [],
    nodeClassOverrides: {},
  },
  ...over,
});

/** A host whose runtime must never be built: every order below is refused before that. */
function refusingHost() {
  const started: string[] = [];
  const host = new SidecarHost({
    log: pino({ level: 'silent' }),
    version: '1.2.3',
    createRuntime: (registration) => {
      started.push(`${registration.platform}/${registration.topology}`);
      return Promise.reject(new Error('no runtime in this test'));
    },
  });
  return { host, started };
}

describe('SidecarHost: which orders reach a driver', () => {
  it('refuses a pair without a driver with UnsupportedPlatform, building nothing', async () => {
    const { host, started } = refusingHost();
    const urgent: boolean[] = [];
    host.onChange((u) => urgent.push(u));
    const result = await host.apply(order({ platform: 'AZURE', topology: 'HOSTED' }));
    expect(started).toEqual([]);
    expect(result).toMatchObject({ applied: 0, pruned: 0, requeue: false });
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Degraded',
          status: 'True',
          reason: 'UnsupportedPlatform',
          message: `no driver for platform AZURE with topology HOSTED; this sidecar supports ${supportedPairs()}`,
        }),
        expect.objectContaining({ type: 'Available', status: 'False' }),
      ]),
    );
    expect(urgent).toEqual([true]);
    expect(await host.snapshot()).toEqual({
      observedGeneration: 3,
      conditions: result.conditions,
      metrics: {},
      csrDecisions: [],
      sidecar: { version: '1.2.3', contractVersion: CONTRACT_VERSION },
    });
  });

  it('refuses an order of a newer contract with UnsupportedContract', async () => {
    const { host, started } = refusingHost();
    const result = await host.apply(order({ contractVersion: CONTRACT_VERSION + 1 }));
    expect(started).toEqual([]);
    expect(result.conditions).toContainEqual(
      expect.objectContaining({
        type: 'Degraded',
        status: 'True',
        reason: 'UnsupportedContract',
      }),
    );
  });

  it('hands a supported pair to the registry driver', async () => {
    const { host, started } = refusingHost();
    await expect(host.apply(order())).rejects.toThrow('no runtime in this test');
    expect(started).toEqual(['AWS/STANDALONE']);
    expect(await host.snapshot()).toBeUndefined();
  });
});

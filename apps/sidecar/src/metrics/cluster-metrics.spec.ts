import { describe, expect, it } from '@jest/globals';
import type { ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch } from '../kube/resource-watch.js';
import { collectMetrics, launchFailed, oldestUnschedulableSeconds } from './cluster-metrics.js';

const now = new Date('2026-12-02T12:00:00Z');
const pod = (name: string, createdSecondsAgo: number, scheduled: Record<string, string>) => ({
  metadata: {
    name,
    // Over a watch it arrives as the RFC 3339 string, whatever client-node's types say.
    creationTimestamp: new Date(
      now.getTime() - createdSecondsAgo * 1000,
    ).toISOString() as unknown as Date,
  },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', ...scheduled }] },
});
const claim = (name: string, launched?: 'True' | 'False' | 'Unknown') => ({
  metadata: { name },
  status: { conditions: launched ? [{ type: 'Launched', status: launched }] : [] },
});
/** A synced watch: collectMetrics then reads its cache and never the API server. */
const cached = (items: unknown[]) =>
  ({ synced: true, items: () => items }) as unknown as ResourceWatch;
const noApiServer = {
  list: () => Promise.reject(new Error('collectMetrics must read the caches of synced watches')),
} as unknown as ClusterClient;

describe('Karpenter health metrics', () => {
  it('counts NodeClaims whose Launched condition is False, not those still launching', () => {
    expect(launchFailed(claim('a', 'False'))).toBe(true);
    expect(launchFailed(claim('b', 'Unknown'))).toBe(false);
    expect(launchFailed(claim('c', 'True'))).toBe(false);
    expect(launchFailed(claim('d'))).toBe(false);
  });

  it('ages the oldest unschedulable pod only, in whole seconds', () => {
    const pods = [
      pod('waiting-for-node', 95.7, { status: 'False', reason: 'Unschedulable' }),
      pod('older-but-scheduling-gated', 600, { status: 'False', reason: 'SchedulingGated' }),
      pod('young', 3, { status: 'False', reason: 'Unschedulable' }),
      pod('bound', 900, { status: 'True' }),
    ];
    expect(oldestUnschedulableSeconds(pods, now)).toBe(95);
    expect(oldestUnschedulableSeconds([], now)).toBe(0);
  });

  it('reports both from the informer caches alongside the existing counts', async () => {
    const metrics = await collectMetrics(
      noApiServer,
      {
        nodes: cached([]),
        nodePools: cached([{ metadata: { name: 'general' } }]),
        pendingPods: cached([pod('p', 120, { status: 'False', reason: 'Unschedulable' })]),
        nodeClaims: cached([claim('a', 'False'), claim('b', 'False'), claim('c', 'True')]),
      },
      { approved: 0, ignored: 0, denied: 0, dropped: 0 },
      now,
    );
    expect(metrics).toMatchObject({
      nodeClaims: 3,
      nodeClaimsByState: { Pending: 2, Launched: 1 },
      pendingPods: 1,
      nodeClaimLaunchFailures: 2,
      oldestPendingPodSeconds: 120,
    });
  });
});

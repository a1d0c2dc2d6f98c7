import { describe, expect, it, jest } from '@jest/globals';
import type { ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch } from '../kube/resource-watch.js';
import { reportDigest } from '../report/status-reporter.js';
import {
  collectMetrics,
  launchFailed,
  launchFailureTimes,
  nodeClaimSummaries,
  nodeForMetrics,
  oldestUnschedulableSince,
  pendingPodForMetrics,
} from './cluster-metrics.js';
import { REPORT_NODECLAIMS_MAX, StatusReport } from '@fleet/contracts';

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
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
const claim = (name: string, launched?: 'True' | 'False' | 'Unknown', failedSecondsAgo = 60) => ({
  metadata: { name, creationTimestamp: ago(3600) as unknown as Date },
  status: {
    conditions: launched
      ? [{ type: 'Launched', status: launched, lastTransitionTime: ago(failedSecondsAgo) }]
      : [],
  },
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

  it('dates the oldest unschedulable pod only, as a time rather than an age', () => {
    const pods = [
      pod('waiting-for-node', 95, { status: 'False', reason: 'Unschedulable' }),
      pod('older-but-scheduling-gated', 600, { status: 'False', reason: 'SchedulingGated' }),
      pod('young', 3, { status: 'False', reason: 'Unschedulable' }),
      pod('bound', 900, { status: 'True' }),
    ];
    expect(oldestUnschedulableSince(pods)).toBe(ago(95));
    expect(oldestUnschedulableSince([])).toBeUndefined();
  });

  it('lists when launches failed, newest first, bounded', () => {
    const claims = [claim('a', 'False', 30), claim('b', 'True'), claim('c', 'False', 10)];
    expect(launchFailureTimes(claims)).toEqual([ago(10), ago(30)]);
    const many = Array.from({ length: 70 }, (_, i) => claim(`x${i}`, 'False', i));
    expect(launchFailureTimes(many)).toHaveLength(64);
    expect(launchFailureTimes(many)[0]).toBe(ago(0));
  });

  it('an unchanged cluster with a long-pending pod and failed launches reports equal digests', async () => {
    const sources = {
      nodes: cached([]),
      nodePools: cached([]),
      pendingPods: cached([pod('stuck', 7200, { status: 'False', reason: 'Unschedulable' })]),
      nodeClaims: cached([claim('a', 'False', 3000)]),
    };
    const report = async (reportedAt: string) => ({
      clusterId: '00000000-0000-4000-8000-000000000001',
      observedGeneration: 3,
      conditions: [],
      metrics: await collectMetrics(noApiServer, sources, {
        approved: 0,
        ignored: 0,
        denied: 0,
        dropped: 0,
      }),
      csrDecisions: [],
      reportedAt,
    });
    // Seven minutes apart on the clock: nothing in the report may move with it.
    jest.useFakeTimers({ now, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const first = await report(now.toISOString());
      jest.setSystemTime(now.getTime() + 7 * 60_000);
      const later = await report(new Date().toISOString());
      expect(first.metrics.oldestPendingPodSince).toBe(ago(7200));
      expect(reportDigest(later)).toBe(reportDigest(first));
    } finally {
      jest.useRealTimers();
    }
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
    );
    expect(metrics).toMatchObject({
      nodeClaims: 3,
      nodeClaimsByState: { Pending: 2, Launched: 1 },
      pendingPods: 1,
      nodeClaimLaunchFailures: 2,
      nodeClaimLaunchFailureTimes: [ago(60), ago(60)],
      oldestPendingPodSince: ago(120),
    });
    expect(metrics).not.toHaveProperty('oldestPendingPodSeconds');
  });
});

describe('what the metrics watches keep of each object', () => {
  it('counts the same from kept Nodes and pending Pods as from whole ones, keeping a fraction', async () => {
    const node = (name: string, pool?: string) => ({
      metadata: {
        name,
        resourceVersion: '7',
        labels: { 'kubernetes.io/os': 'linux', ...(pool ? { 'karpenter.sh/nodepool': pool } : {}) },
        annotations: { 'machine.openshift.io/machine': `openshift-machine-api/${name}` },
        managedFields: [{ manager: 'kubelet', fieldsV1: { 'f:status': { 'f:images': {} } } }],
      },
      spec: { providerID: `aws:///us-east-1a/i-${name}`, taints: [] },
      status: {
        capacity: { cpu: '4', memory: '16Gi' },
        images: Array.from({ length: 50 }, (_, i) => ({
          names: [`quay.io/x/image-${i}@sha256:${'a'.repeat(64)}`],
          sizeBytes: 1,
        })),
      },
    });
    const whole = {
      nodes: [node('a', 'general'), node('b'), node('c', 'general')],
      pendingPods: [
        {
          ...pod('p', 120, { status: 'False', reason: 'Unschedulable' }),
          spec: {
            containers: [
              { name: 'app', image: 'x', env: [{ name: 'A', value: 'b'.repeat(2000) }] },
            ],
          },
        },
        pod('q', 60, { status: 'True' }),
      ],
    };
    const metricsOf = (nodes: unknown[], pendingPods: unknown[]) =>
      collectMetrics(
        noApiServer,
        {
          nodes: cached(nodes),
          nodePools: cached([]),
          pendingPods: cached(pendingPods),
          nodeClaims: cached([]),
        },
        { approved: 0, ignored: 0, denied: 0, dropped: 0 },
      );
    const kept = {
      nodes: whole.nodes.map(nodeForMetrics),
      pendingPods: whole.pendingPods.map(pendingPodForMetrics),
    };
    expect(await metricsOf(kept.nodes, kept.pendingPods)).toEqual(
      await metricsOf(whole.nodes, whole.pendingPods),
    );
    expect((await metricsOf(kept.nodes, kept.pendingPods)).vcpus).toBe(8);
    expect(kept.nodes[0]!.metadata).toEqual({
      name: 'a',
      resourceVersion: '7',
      labels: { 'karpenter.sh/nodepool': 'general' },
    });
    expect(JSON.stringify(kept).length * 10).toBeLessThan(JSON.stringify(whole).length);
  });
});

describe('nodeClaimSummaries (issue 47)', () => {
  const claim = (i: number, failed = false) => ({
    metadata: {
      name: `general-${i}`,
      labels: {
        'karpenter.sh/nodepool': 'general',
        'node.kubernetes.io/instance-type': 'm6i.xlarge',
        'topology.kubernetes.io/zone': 'us-east-1a',
        'karpenter.sh/capacity-type': 'spot',
      },
      creationTimestamp: new Date(now.getTime() - i * 60_000).toISOString() as unknown as Date,
    },
    status: {
      ...(failed ? {} : { nodeName: `ip-10-0-0-${i}.ec2.internal` }),
      conditions: failed
        ? [
            {
              type: 'Launched',
              status: 'False',
              reason: 'InsufficientCapacityError',
              message: 'x'.repeat(2000),
            },
          ]
        : [
            { type: 'Launched', status: 'True' },
            { type: 'Registered', status: 'True' },
          ],
    },
  });

  it('keeps every launch failure, then the newest, within the bound and the contract', () => {
    // 30 claims; the two oldest failed: they are kept, the oldest successes go.
    const claims = [
      ...Array.from({ length: 28 }, (_, i) => claim(i)),
      claim(40, true),
      claim(41, true),
    ];
    const summaries = nodeClaimSummaries(claims);
    expect(summaries).toHaveLength(REPORT_NODECLAIMS_MAX);
    expect(summaries.filter((s) => s.launchFailure).map((s) => s.name)).toEqual([
      'general-40',
      'general-41',
    ]);
    expect(summaries[0]).toEqual({
      name: 'general-0',
      nodePool: 'general',
      nodeName: 'ip-10-0-0-0.ec2.internal',
      instanceType: 'm6i.xlarge',
      zone: 'us-east-1a',
      capacityType: 'spot',
      state: 'Registered',
      createdAt: now.toISOString(),
    });
    // The message is cut to what the contract takes, and the whole report still parses.
    expect(summaries.at(-1)!.launchFailure!.message).toHaveLength(512);
    expect(
      StatusReport.safeParse({
        clusterId: '6a1f2d3c-0b6e-4c55-9d5e-2f3a4b5c6d7e',
        observedGeneration: 1,
        conditions: [],
        nodeClaims: summaries,
        reportedAt: now.toISOString(),
      }).success,
    ).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createRegistry, fleetMetrics, oldestQueuedAt, type FleetState } from './metrics.js';

const sampleLines = (text: string, metric: string) =>
  text.split('\n').filter((l) => l.startsWith(`${metric} `) || l.startsWith(`${metric}{`));

describe('ingest lag', () => {
  let redis: Redis;
  let queue: Queue;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
      maxRetriesPerRequest: null,
    });
    queue = new Queue('status-ingest', {
      connection: redis,
      prefix: `test-${randomBytes(4).toString('hex')}`,
    });
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  });

  it('is the age of the oldest report waiting or backing off, 0 when none waits', async () => {
    const registry = createRegistry('worker');
    fleetMetrics.ingestLag(registry, () => oldestQueuedAt(queue));
    expect(sampleLines(await registry.metrics(), 'fleet_status_ingest_lag_seconds')).toEqual([
      'fleet_status_ingest_lag_seconds{app="worker"} 0',
    ]);

    const now = Date.now();
    await queue.add('report', {}, { timestamp: now - 30_000 });
    await queue.add('report', {}, { timestamp: now - 10_000 });
    expect(await oldestQueuedAt(queue)).toBe(now - 30_000);
    // A retry backing off was queued first: it is the oldest, though it runs later.
    await queue.add('report', {}, { timestamp: now - 90_000, delay: 60_000 });
    expect(await oldestQueuedAt(queue)).toBe(now - 90_000);
    const [line] = sampleLines(await registry.metrics(), 'fleet_status_ingest_lag_seconds');
    const lag = Number(line!.split(' ')[1]);
    expect(lag).toBeGreaterThanOrEqual(90);
    expect(lag).toBeLessThan(100);
  });
});

describe('fleet state', () => {
  const state: FleetState = {
    clusters: [{ topology: 'STANDALONE', platform: 'AWS', clusters: 3 }],
    conditions: [
      { type: 'Stale', status: 'True', clusters: 1 },
      { type: 'Stale', status: 'False', clusters: 2 },
    ],
    rollouts: { RUNNING: 1, FAILED: 0 },
  };

  it('reads PostgreSQL once per scrape for all three gauges', async () => {
    const registry = createRegistry('worker');
    let reads = 0;
    fleetMetrics.fleetState(registry, () => {
      reads++;
      return Promise.resolve(state);
    });
    const text = await registry.metrics();
    expect(reads).toBe(1);
    expect(sampleLines(text, 'fleet_clusters')).toEqual([
      'fleet_clusters{topology="STANDALONE",platform="AWS",app="worker"} 3',
    ]);
    expect(sampleLines(text, 'fleet_cluster_conditions')).toEqual([
      'fleet_cluster_conditions{type="Stale",status="True",app="worker"} 1',
      'fleet_cluster_conditions{type="Stale",status="False",app="worker"} 2',
    ]);
    expect(sampleLines(text, 'fleet_rollouts')).toEqual([
      'fleet_rollouts{state="RUNNING",app="worker"} 1',
      'fleet_rollouts{state="FAILED",app="worker"} 0',
    ]);
    await registry.metrics();
    expect(reads).toBe(2);
  });

  it('leaves its series out, not the scrape, while PostgreSQL does not answer; nothing stale stays', async () => {
    const registry = createRegistry('worker');
    let up = true;
    fleetMetrics.fleetState(registry, () =>
      up ? Promise.resolve(state) : Promise.reject(new Error('connection refused')),
    );
    expect(sampleLines(await registry.metrics(), 'fleet_clusters')).toHaveLength(1);
    up = false;
    const text = await registry.metrics();
    for (const metric of ['fleet_clusters', 'fleet_cluster_conditions', 'fleet_rollouts'])
      expect(sampleLines(text, metric)).toEqual([]);
    expect(text).toContain('process_cpu_seconds_total');
  });
});

describe('CSR decisions', () => {
  it('are the approver counts, and absent before the sidecar has an approver', async () => {
    const registry = createRegistry('sidecar', { cluster: 'c-1' });
    const approver: { counts?: Record<string, number> } = {};
    fleetMetrics.csrDecisions(registry, () => approver.counts);
    expect(sampleLines(await registry.metrics(), 'fleet_csr_decisions_total')).toEqual([]);
    approver.counts = { approved: 4, denied: 1, ignored: 0, dropped: 0 };
    expect(sampleLines(await registry.metrics(), 'fleet_csr_decisions_total')).toEqual([
      'fleet_csr_decisions_total{decision="approved",cluster="c-1",app="sidecar"} 4',
      'fleet_csr_decisions_total{decision="denied",cluster="c-1",app="sidecar"} 1',
      'fleet_csr_decisions_total{decision="ignored",cluster="c-1",app="sidecar"} 0',
      'fleet_csr_decisions_total{decision="dropped",cluster="c-1",app="sidecar"} 0',
    ]);
  });
});

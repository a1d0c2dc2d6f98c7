import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  REPORT_DECISIONS_PER_SEND,
  STATUS_REPORT_BODY_LIMIT_BYTES,
  type CsrDecision,
  type StatusReport,
} from '@fleet/contracts';
import { createPrismaClient, type PrismaClient } from '@fleet/database';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import {
  createTestDatabase,
  eventually,
  largestStatusReport,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import {
  ReportPublisher,
  type ReportSource,
} from '../../apps/sidecar/src/report/report-publisher.js';
import { StatusReporter } from '../../apps/sidecar/src/report/status-reporter.js';
import type { StatusSnapshot } from '../../apps/sidecar/src/report/cluster-status.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from './start-api.js';

const REGISTER = `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
  reportToken cluster { id uid } } }`;

/** The approver's outbox as the publisher sees it, full (1,000 decisions of 1,024 characters). */
class FullOutbox implements ReportSource {
  decisions: CsrDecision[] = Array.from({ length: 1000 }, (_, i) => ({
    csrName: `csr-${String(i).padStart(4, '0')}`,
    nodeName: `ip-10-0-${Math.floor(i / 250)}-${i % 250}.ec2.internal`,
    signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
    decision: 'Ignored',
    reason: 'UnknownNodeName',
    message: `no instance of the NodeClaims awaiting a node is named it ${'.'.repeat(1024)}`.slice(
      0,
      1024,
    ),
    decidedAt: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
  }));
  onChange(): () => void {
    return () => undefined;
  }
  snapshot(): Promise<StatusSnapshot> {
    return Promise.resolve({
      observedGeneration: 1,
      conditions: [],
      metrics: {},
      csrDecisions: [...this.decisions],
    });
  }
  acknowledge(sent: readonly CsrDecision[]): void {
    const done = new Set(sent);
    this.decisions = this.decisions.filter((d) => !done.has(d));
  }
  drop(): void {
    throw new Error('nothing here is refused on its own');
  }
}

/**
 * A cluster is never silenced by its own report: the API takes the largest valid report, and the
 * sidecar's full outbox (1,000 decisions, which the API's old 100 kB default refused with 413
 * forever) reaches PostgreSQL over several accepted reports.
 */
describe('status report size', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let prisma: PrismaClient;
  const prefix = testQueuePrefix();
  let cluster: { reportToken: string; cluster: { id: string; uid: string } };

  const post = (body: string, path = `/v1/clusters/${cluster.cluster.uid}/status`) =>
    fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${cluster.reportToken}`,
      },
      body,
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    prisma = createPrismaClient(db.url);
    const res = await api.admin<{ registerCluster: typeof cluster }>(REGISTER, { name: 'chatty' });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    cluster = res.data.registerCluster;
  });

  afterAll(async () => {
    const admin = new Redis();
    if (cluster) await admin.call('ACL', 'DELUSER', `sidecar.${cluster.cluster.uid}`);
    admin.disconnect();
    await prisma?.$disconnect();
    await worker?.close();
    await api?.app.close();
    await db?.drop();
  });

  it('accepts the largest valid report, and says 413 past the limit', async () => {
    const largest = JSON.stringify(largestStatusReport(cluster.cluster.uid));
    const bytes = Buffer.byteLength(largest);
    expect(bytes).toBeGreaterThan(3_000_000);
    expect(bytes).toBeLessThan(STATUS_REPORT_BODY_LIMIT_BYTES);
    expect((await post(largest)).status).toBe(202);
    const tooLarge = `${largest.slice(0, -1)},"padding":"${'x'.repeat(STATUS_REPORT_BODY_LIMIT_BYTES - bytes)}"}`;
    expect((await post(tooLarge)).status).toBe(413);
    // Everything else keeps Express' 100 kB.
    const graphql = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.adminToken}` },
      body: JSON.stringify({ query: `{ __typename }`, padding: 'x'.repeat(200 * 1024) }),
    });
    expect(graphql.status).toBe(413);
  });

  it('drains a 1,000-decision outbox over several accepted reports into PostgreSQL', async () => {
    const reporter = new StatusReporter(api.url, cluster.cluster.uid, cluster.reportToken);
    const sent: StatusReport[] = [];
    const outbox = new FullOutbox();
    const publisher = new ReportPublisher(
      outbox,
      cluster.cluster.uid,
      async (report) => {
        await reporter.send(report, 1);
        sent.push(report);
      },
      pino({ level: 'silent' }),
    );
    await publisher.publish();
    publisher.stop();
    expect(outbox.decisions).toEqual([]);
    expect(sent.length).toBe(1000 / REPORT_DECISIONS_PER_SEND);
    expect(sent.every((r) => r.csrDecisions.length === REPORT_DECISIONS_PER_SEND)).toBe(true);
    const stored = await eventually(
      async () => {
        const n = await prisma.csrDecision.count({ where: { clusterId: cluster.cluster.uid } });
        // The largest report's 1,000 decisions are there too.
        return n >= 2000 ? n : undefined;
      },
      { timeoutMs: 30_000, what: 'every decision ingested' },
    );
    expect(stored).toBe(2000);
  });
});

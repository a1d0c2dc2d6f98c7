import { afterEach, describe, expect, it } from '@jest/globals';
import { StatusReport, type CsrDecision } from '@fleet/contracts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { StatusSnapshot } from './cluster-status.js';
import { ReportPublisher, type ReportSource } from './report-publisher.js';
import { StatusReporter } from './status-reporter.js';

const CLUSTER = '00000000-0000-4000-8000-0000000000aa';

const decision = (i: number, message = `decision ${i}`): CsrDecision => ({
  csrName: `csr-${i}`,
  signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
  decision: 'Ignored',
  reason: 'UnknownNodeName',
  message,
  decidedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(),
});

/** An outbox as the approver keeps it: acknowledged decisions leave, dropped ones are counted. */
class Outbox implements ReportSource {
  dropped = 0;
  constructor(public decisions: CsrDecision[]) {}
  onChange(): () => void {
    return () => undefined;
  }
  snapshot(): Promise<StatusSnapshot> {
    return Promise.resolve({
      observedGeneration: 1,
      conditions: [],
      metrics: { csrDecisionsDropped: this.dropped },
      csrDecisions: [...this.decisions],
    });
  }
  acknowledge(sent: readonly CsrDecision[]): void {
    const done = new Set(sent);
    this.decisions = this.decisions.filter((d) => !done.has(d));
  }
  drop(refused: readonly CsrDecision[]): void {
    const before = this.decisions.length;
    this.acknowledge(refused);
    this.dropped += before - this.decisions.length;
  }
}

/**
 * A fleet API stand-in over real HTTP: 413 past `limit` bytes (as body-parser answers), 400 for
 * what the real schema refuses or for a decision it is told to refuse, 202 otherwise.
 */
async function fleetApi(limit: number, refuse: (d: CsrDecision) => boolean = () => false) {
  const accepted: StatusReport[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      chunks.push(c);
    });
    req.on('end', () => {
      const answer = (status: number) => {
        statuses.push(status);
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      };
      if (size > limit) return answer(413);
      const parsed = StatusReport.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      if (!parsed.success || parsed.data.csrDecisions.some(refuse)) return answer(400);
      accepted.push(parsed.data);
      return answer(202);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    accepted,
    statuses,
    reporter: new StatusReporter(url, CLUSTER, 'token'),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('ReportPublisher: a cluster is never silenced by its own report', () => {
  let api: Awaited<ReturnType<typeof fleetApi>> | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });
  const publisher = (source: Outbox) =>
    new ReportPublisher(
      source,
      CLUSTER,
      (r) => api!.reporter.send(r, 1),
      pino({ level: 'silent' }),
    );

  it('drains a full outbox over several reports, each within the cap', async () => {
    api = await fleetApi(100 * 1024);
    const source = new Outbox(Array.from({ length: 1000 }, (_, i) => decision(i)));
    await publisher(source).publish();
    expect(source.decisions).toEqual([]);
    expect(api.accepted.length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...api.accepted.map((r) => r.csrDecisions.length))).toBeLessThanOrEqual(100);
    expect(api.accepted.flatMap((r) => r.csrDecisions.map((d) => d.csrName))).toEqual(
      Array.from({ length: 1000 }, (_, i) => `csr-${i}`),
    );
    expect(source.dropped).toBe(0);
  });

  it('sends fewer decisions after a 413 instead of stopping', async () => {
    // 20 KB: about 10 decisions of 1,000 characters fit in one report.
    api = await fleetApi(20 * 1024);
    const source = new Outbox(Array.from({ length: 60 }, (_, i) => decision(i, 'x'.repeat(1000))));
    await publisher(source).publish();
    expect(source.decisions).toEqual([]);
    expect(api.statuses).toContain(413);
    expect(api.accepted.flatMap((r) => r.csrDecisions)).toHaveLength(60);
    expect(source.dropped).toBe(0);
  });

  it('drops and counts only a decision the fleet refuses on its own, and reports the count', async () => {
    api = await fleetApi(1024 * 1024, (d) => d.csrName === 'csr-7');
    const source = new Outbox(Array.from({ length: 20 }, (_, i) => decision(i)));
    const p = publisher(source);
    await p.publish();
    expect(source.decisions).toEqual([]);
    expect(source.dropped).toBe(1);
    const delivered = api.accepted.flatMap((r) => r.csrDecisions.map((d) => d.csrName));
    expect(delivered).toHaveLength(19);
    expect(delivered).not.toContain('csr-7');
    await p.publish();
    expect(api.accepted.at(-1)?.metrics.csrDecisionsDropped).toBe(1);
  });

  it('keeps the decisions when the report is refused for something else', async () => {
    // Every report is refused (as a report of an unregistered shape would be): nothing is dropped.
    api = await fleetApi(1024 * 1024, () => false);
    const source = new Outbox([decision(1), decision(2)]);
    const refusing = new ReportPublisher(
      source,
      'not-a-uuid',
      (r) => api!.reporter.send(r, 1),
      pino({ level: 'silent' }),
    );
    await refusing.publish();
    expect(api.statuses.every((s) => s === 400)).toBe(true);
    expect(source.decisions).toHaveLength(2);
    expect(source.dropped).toBe(0);
  });
});

import { afterEach, describe, expect, it } from '@jest/globals';
import { Heartbeat, StatusReport } from '@fleet/contracts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reportDigest, StatusReporter } from './status-reporter.js';

const CLUSTER = '00000000-0000-4000-8000-0000000000bb';

/**
 * The fleet's side of heartbeats over real HTTP: a full report's digest becomes the applied one
 * (unless `forget` is set), a heartbeat is 202 only for the applied digest, else 409.
 */
async function fleet() {
  const received: { path: string; body: unknown }[] = [];
  const state = { applied: undefined as string | undefined, forget: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      const path = req.url ?? '';
      received.push({ path, body });
      const answer = (status: number) => res.writeHead(status).end('{}');
      if (path.endsWith('/heartbeat')) {
        const beat = Heartbeat.parse(body);
        return answer(beat.digest === state.applied ? 202 : 409);
      }
      const report = StatusReport.parse(body);
      if (!state.forget) state.applied = report.digest;
      return answer(202);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    received,
    state,
    url,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const report = (nodes: number, reportedAt = new Date().toISOString()): StatusReport => ({
  clusterId: CLUSTER,
  observedGeneration: 1,
  conditions: [],
  metrics: { nodes },
  csrDecisions: [],
  reportedAt,
});

describe('StatusReporter: heartbeats that change nothing', () => {
  let api: Awaited<ReturnType<typeof fleet>> | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });
  const paths = () => api!.received.map((r) => r.path.split('/').pop());

  it('sends an unchanged report as a heartbeat naming the digest of the last accepted one', async () => {
    api = await fleet();
    const reporter = new StatusReporter(api.url, CLUSTER, 'token');
    await reporter.send(report(3, '2026-01-01T00:00:00.000Z'), 1);
    await reporter.send(report(3, '2026-01-01T00:00:30.000Z'), 1);
    await reporter.send(report(4), 1); // changed: a full report
    await reporter.send(report(4), 1);
    expect(paths()).toEqual(['status', 'heartbeat', 'status', 'heartbeat']);
    expect(reporter.heartbeats).toBe(2);
    // The full report carries its digest, computed without reportedAt.
    const first = api.received[0]!.body as StatusReport;
    expect(first.digest).toBe(reportDigest(report(3, '2030-01-01T00:00:00.000Z')));
    expect(api.received[1]!.body).toEqual({ clusterId: CLUSTER, digest: first.digest });
  });

  it('sends the full report when the fleet does not hold the digest (409), and with decisions', async () => {
    api = await fleet();
    api.state.forget = true;
    const reporter = new StatusReporter(api.url, CLUSTER, 'token');
    await reporter.send(report(3), 1);
    await reporter.send(report(3), 1); // 409, then the full report at once
    api.state.forget = false;
    await reporter.send(report(3), 1); // 409 again (that one was forgotten too): full, applied
    await reporter.send(report(3), 1);
    const decision = {
      csrName: 'csr-1',
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      decision: 'Ignored' as const,
      reason: 'UnknownNodeName',
      message: 'x',
      decidedAt: new Date().toISOString(),
    };
    await reporter.send({ ...report(3), csrDecisions: [decision] }, 1);
    expect(paths()).toEqual([
      'status',
      'heartbeat',
      'status',
      'heartbeat',
      'status',
      'heartbeat',
      'status',
    ]);
  });

  it('sends a full report at least every fullReportEveryMs, whatever changed', async () => {
    api = await fleet();
    const reporter = new StatusReporter(api.url, CLUSTER, 'token', 0);
    await reporter.send(report(3), 1);
    await reporter.send(report(3), 1);
    expect(paths()).toEqual(['status', 'status']);
  });
});

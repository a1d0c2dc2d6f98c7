import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEAD_LETTER_QUEUE, queueLabel } from '@fleet/contracts';
import {
  createTestDatabase,
  eventually,
  freePort,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { readExposition, seriesUsed, type SeriesUse } from './promql.js';

const run = promisify(execFile);
const ROOT = process.cwd();
const RULES = join(ROOT, 'deploy/monitoring/prometheusrule.yaml');
const DASHBOARD = join(ROOT, 'deploy/monitoring/fleet-dashboard.json');
const PROMTOOL_TESTS = join(ROOT, 'test/monitoring/fleet-alerts.promtool.yml');
const RUNBOOKS = join(ROOT, 'docs/OBSERVABILITY.md');
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface PrometheusRule {
  kind: string;
  spec: { groups: { name: string; rules: AlertRule[] }[] };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
interface Dashboard {
  templating: { list: { name: string; type: string; query: string | { query: string } }[] };
  panels: Panel[];
}

const rule = parse(readFileSync(RULES, 'utf8')) as PrometheusRule;
const alerts = rule.spec.groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);

/** Every PromQL expression of the dashboard and the rules, named by where it is. */
function expressions(): { where: string; uses: SeriesUse[] }[] {
  const fromAlerts = alerts.map((a) => ({ where: `alert ${a.alert}`, uses: seriesUsed(a.expr) }));
  const fromPanels = panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, uses: seriesUsed(t.expr) })),
  );
  // Grafana's label_values(<selector>, <label>): the selector reads a series, the label is on it.
  const fromVariables = dashboard.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => {
      const query = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\((.+),\s*([a-zA-Z_]\w*)\)$/.exec(query);
      if (!m) throw new Error(`variable ${v.name}: not label_values(selector, label): ${query}`);
      const uses = seriesUsed(m[1]!).map((u) => ({ ...u, labels: [...u.labels, m[2]!] }));
      return { where: `variable ${v.name}`, uses };
    });
  return [...fromAlerts, ...fromPanels, ...fromVariables];
}

describe('monitoring: the alerting rules and the dashboard', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-alerts-'));
    // promtool reads plain rule files: the PrometheusRule's spec is one.
    writeFileSync(join(dir, 'fleet-alerts.rules.yml'), stringify(rule.spec));
    copyFileSync(PROMTOOL_TESTS, join(dir, 'fleet-alerts.promtool.yml'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const promtool = async (...args: string[]) => {
    try {
      return (await run(PROMTOOL, args, { cwd: dir, timeout: 30_000 })).stdout;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(
        `promtool ${args.join(' ')}: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`,
        { cause: err },
      );
    }
  };

  it('promtool check rules accepts the PrometheusRule', async () => {
    expect(rule.kind).toBe('PrometheusRule');
    expect(await promtool('check', 'rules', 'fleet-alerts.rules.yml')).toMatch(
      `SUCCESS: ${alerts.length} rules found`,
    );
  });

  it('promtool test rules: each alert fires on synthetic series, and only when it should', async () => {
    expect(await promtool('test', 'rules', 'fleet-alerts.promtool.yml')).toMatch(/SUCCESS/);
    // Every alert has a test case that expects it firing.
    const tests = parse(readFileSync(PROMTOOL_TESTS, 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests
        .flatMap((t) => t.alert_rule_test)
        .filter((a) => a.exp_alerts.length > 0)
        .map((a) => a.alertname),
    );
    expect([...fired].sort()).toEqual(alerts.map((a) => a.alert).sort());
  });

  it('pages for what an SRE must be woken for, each with its runbook section in docs/OBSERVABILITY.md', () => {
    expect(alerts.map((a) => a.alert)).toEqual(
      expect.arrayContaining([
        'FleetClustersStale',
        'FleetClustersDegraded',
        'FleetIngestLagging',
        'FleetDeadLettersGrowing',
        'FleetRolloutFailed',
      ]),
    );
    const doc = readFileSync(RUNBOOKS, 'utf8');
    // GitHub's anchors: the heading in lower case.
    const anchors = new Set(
      [...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const a of alerts) {
      expect(a.labels?.severity).toBe('critical');
      expect(a.annotations).toMatchObject({ summary: expect.any(String) });
      const anchor = /^docs\/OBSERVABILITY\.md#(.+)$/.exec(a.annotations?.runbook_url ?? '')?.[1];
      expect({ alert: a.alert, runbook: anchor && anchors.has(anchor) }).toEqual({
        alert: a.alert,
        runbook: true,
      });
    }
  });

  it('the dashboard: unique panel IDs, every panel queries, and the cluster row drills down on $cluster', () => {
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels.filter((p) => p.type !== 'row')) {
      expect({ panel: p.title, targets: (p.targets ?? []).length > 0 }).toEqual({
        panel: p.title,
        targets: true,
      });
    }
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'cluster']);
    const rowAt = panels.findIndex((p) => p.type === 'row' && p.title === 'Cluster $cluster');
    const drillDown = panels.slice(rowAt + 1).filter((p) => p.type !== 'row');
    expect(drillDown.length).toBeGreaterThan(0);
    for (const p of drillDown)
      for (const t of p.targets ?? []) expect(t.expr).toContain('cluster=~"$cluster"');
  });

  describe('against the running processes', () => {
    let db: TestDatabase;
    let api: RunningApi;
    let worker: Awaited<ReturnType<typeof startWorker>>;
    let kube: EmulatedCluster;
    let sidecar: RunningProcess;
    let sidecarOps: string;
    let sidecarMetrics: string;
    let clusterUid: string;
    let prefix: string;

    const scrape = async (url: string) => {
      const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(200);
      return res.text();
    };
    const sample = (text: string, metric: string, labels: Record<string, string>) => {
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith(`${metric}{`) &&
            Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
        );
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };

    beforeAll(async () => {
      const emulated = startEmulatedCluster();
      db = await createTestDatabase();
      prefix = testQueuePrefix();
      api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
      // Seconds-scale staleness (4 s), so a cluster without a sidecar turns Stale within the suite.
      worker = await startWorker({
        DATABASE_URL: db.url,
        QUEUE_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        OPS_PORT: '0',
        HEARTBEAT_SECONDS: '2',
        STALE_AFTER_HEARTBEATS: '2',
        SWEEP_EVERY_SECONDS: '0.5',
        ROLLOUT_TICK_MS: '200',
      });
      kube = await emulated;
      const east = await registerCluster(api.admin, { name: 'prod-east' });
      await registerCluster(api.admin, { name: 'prod-west', labels: { region: 'west' } });
      clusterUid = east.uid;
      const opsPort = await freePort();
      sidecarOps = `http://127.0.0.1:${opsPort}`;
      sidecar = startSidecarProcess(
        kube,
        east,
        { apiUrl: api.url, queuePrefix: prefix },
        { OPS_PORT: String(opsPort), HEARTBEAT_SECONDS: '1', LOG_LEVEL: 'warn' },
      );
      // Every test reads the sidecar after it applied its registration order (CSR approver built).
      sidecarMetrics = await eventually(
        async () => {
          const t = await scrape(sidecarOps);
          return t.includes('fleet_reconcile_duration_seconds_count{') ? t : undefined;
        },
        { timeoutMs: 45_000, what: 'a reconcile observed by the sidecar' },
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${sidecar.output()}`, { cause: err });
      });
    }, 90_000);

    afterAll(async () => {
      await sidecar?.stop();
      await worker?.close();
      await api?.app.close();
      await kube?.stop();
      await db?.drop();
    });

    it('the fleet gauges count what PostgreSQL and the queues hold: a Stale cluster, a FAILED rollout, a dead letter', async () => {
      let last = '';
      const fail = (err: Error) => {
        const conditions = last.split('\n').filter((l) => l.startsWith('fleet_cluster_conditions'));
        throw new Error(`${err.message}\n${conditions.join('\n')}\n${sidecar.output()}`);
      };
      // prod-west has no sidecar: Stale after 4 s; prod-east's sidecar reports every second.
      await eventually(
        async () => {
          last = await scrape(worker.opsUrl!);
          return sample(last, 'fleet_cluster_conditions', { type: 'Stale', status: 'True' }) ===
            1 && sample(last, 'fleet_cluster_conditions', { type: 'Available', status: 'True' })
            ? last
            : undefined;
        },
        { timeoutMs: 40_000, what: 'one cluster Stale, one Available' },
      ).catch(fail);

      // A rollout to the Stale cluster fails at once (maxFailures 0).
      const started = await api.admin<{ startRollout: { id: string } }>(
        `mutation { startRollout(selector: "region=west", change: { logLevel: error },
           strategy: { minHealthySeconds: 1, waveTimeoutSeconds: 60 }) { id } }`,
      );
      expect(started.errors).toBeUndefined();
      const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
        maxRetriesPerRequest: null,
      });
      const deadLetters = new Queue(DEAD_LETTER_QUEUE, { connection: redis, prefix });
      try {
        await deadLetters.add('dead-letter', { queue: 'reconcile', jobId: 'x' });
        const text = await eventually(
          async () => {
            const t = await scrape(worker.opsUrl!);
            return sample(t, 'fleet_rollouts', { state: 'FAILED' }) === 1 ? t : undefined;
          },
          { timeoutMs: 15_000, what: 'the rollout FAILED in fleet_rollouts' },
        );
        expect(sample(text, 'fleet_queue_depth', { queue: queueLabel(DEAD_LETTER_QUEUE) })).toBe(1);
        expect(
          sample(text, 'fleet_clusters', {
            topology: 'STANDALONE',
            platform: 'AWS',
            app: 'worker',
          }),
        ).toBe(2);
        expect(sample(text, 'fleet_rollouts', { state: 'COMPLETED' })).toBe(0);
        // Reports flow: nothing waits long for ingest.
        const lag = Number(/^fleet_status_ingest_lag_seconds\{[^}]*\} (\S+)$/m.exec(text)?.[1]);
        expect(lag).toBeGreaterThanOrEqual(0);
        expect(lag).toBeLessThan(10);
      } finally {
        await deadLetters.close();
        redis.disconnect();
      }
    }, 60_000);

    it('the sidecar labels its series with its cluster and counts its CSR decisions', () => {
      const text = sidecarMetrics;
      expect(
        sample(text, 'fleet_reconcile_duration_seconds_count', {
          outcome: 'applied',
          cluster: clusterUid,
          app: 'sidecar',
        }),
      ).toBeGreaterThanOrEqual(1);
      for (const decision of ['approved', 'denied', 'ignored', 'dropped'])
        expect(sample(text, 'fleet_csr_decisions_total', { decision, cluster: clusterUid })).toBe(
          0,
        );
    });

    it('every metric and label the dashboard and the alerts read is one the API, worker or sidecar serves', async () => {
      const used = expressions();
      const compare = async () => {
        const served = new Map<string, Set<string>>();
        const declared = new Set<string>();
        for (const url of [api.url, worker.opsUrl!, sidecarOps]) {
          const exposition = readExposition(await scrape(url));
          for (const name of exposition.declared) declared.add(name);
          for (const [metric, labels] of exposition.samples) {
            const known = served.get(metric) ?? new Set<string>();
            for (const l of labels) known.add(l);
            served.set(metric, known);
          }
        }
        const missing: string[] = [];
        const unobserved = new Set<string>();
        for (const { where, uses } of used)
          for (const { metric, labels } of uses) {
            const known = served.get(metric);
            if (known) {
              for (const l of labels)
                if (!known.has(l)) missing.push(`${where}: ${metric} has no label ${l}`);
            } else if (declared.has(metric)) unobserved.add(metric);
            else missing.push(`${where}: ${metric} is not served`);
          }
        return { missing, unobserved: [...unobserved].sort() };
      };
      // Labelled series appear with their first sample (the first report ingested, say): a few
      // seconds' grace, then the last comparison is the verdict.
      let last = await compare();
      await eventually(
        async () => {
          last = await compare();
          return last.missing.length === 0 ? last : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 500, what: 'every series the dashboard reads' },
      ).catch(() => undefined);
      expect(last.missing).toEqual([]);
      // Declared, but nothing refused by a rate limit here, so no sample shows their labels.
      expect(last.unobserved).toEqual([
        'fleet_api_rate_limited_total',
        'fleet_api_rate_limiter_unavailable_total',
      ]);
      // The comparison saw every expression (a parser that found nothing would pass).
      expect(new Set(used.flatMap((u) => u.uses.map((x) => x.metric))).size).toBeGreaterThan(15);
    });
  });
});

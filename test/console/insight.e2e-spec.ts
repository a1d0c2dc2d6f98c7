import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { condition, registerClusters, type RegisteredCluster } from '../faults/fleet-fixture.js';
import { launchChromium, screenshot, seriousViolations, textMatches } from './browser.js';

/**
 * What happened, in the console (issue 47): one health state per cluster on the Overview and in
 * the table, the table fitting 1280 px with relative dates. Status is written as the ingest
 * writes it (the rows), so each state is exactly the one under test.
 */
describe('the console shows what happened', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let pool: pg.Pool;
  let browser: Browser;
  let clusters: RegisteredCluster[];
  const contexts: BrowserContext[] = [];

  async function newPage(width = 1440): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    context.setDefaultTimeout(15_000);
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(api.url);
    await page.getByLabel('API token').fill(api.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    return page;
  }

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    db = await createTestDatabase();
    // Reports written once: an hour before they count as stale, however slow the machine.
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      STALE_AFTER_SECONDS: '3600',
    });
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    // degraded-0: reporting, latest generation applied, Degraded=True (in sync AND degraded: the
    // contradiction the issue saw); healthy-0: reporting, in sync; the third never reported.
    clusters = [
      ...(await registerClusters(api, 1, 'degraded')),
      ...(await registerClusters(api, 1, 'healthy')),
      ...(await registerClusters(api, 1, 'silent')),
    ];
    const at = new Date().toISOString();
    const report = (uid: string, conditions: unknown[]) =>
      pool.query(
        `UPDATE "ClusterStatus" SET "observedGeneration" = 1, conditions = $2::jsonb, "lastReportAt" = now()
          WHERE "clusterId" = $1`,
        [uid, JSON.stringify(conditions)],
      );
    await report(clusters[0]!.uid, [
      condition('Available', 'True', 'AsExpected', at),
      condition('Degraded', 'True', 'KarpenterPoolsDegraded', at),
    ]);
    await report(clusters[1]!.uid, [
      condition('Available', 'True', 'AsExpected', at),
      condition('Degraded', 'False', 'AsExpected', at),
    ]);
    await seedHistory();
    browser = await launchChromium();
  }, 120_000);

  const HOUR = 3_600_000;
  const STEP = 900_000; // the cluster page's 24 h charts: 15-minute steps
  /**
   * History as the ingest and the worker's roll-up write it: hourly roll-ups for the fleet with
   * hours missing (gaps), raw samples of degraded-0 in two runs with a gap between, and CSR
   * decisions approved and refused for two reasons.
   */
  async function seedHistory(): Promise<void> {
    const [degraded, healthy] = clusters as [RegisteredCluster, RegisteredCluster];
    await pool.query(`UPDATE "Cluster" SET "createdAt" = now() - interval '2 days'`);
    const thisHour = Math.floor(Date.now() / HOUR) * HOUR;
    const rollup = (uid: string, back: number, degradedSamples: number) =>
      pool.query(
        `INSERT INTO "HealthRollup" ("clusterId", bucket, samples, "availableSamples", "degradedSamples", "progressingSamples", "nodesAvg", "nodesMax", "vcpusAvg")
         VALUES ($1, $2, 120, 120, $3, 0, 3, 3, 12)`,
        [uid, new Date(thisHour - back * HOUR), degradedSamples],
      );
    // Hours 10..6 back reported, 5..3 back nothing (a gap), 2..1 back reported again.
    for (const back of [10, 9, 8, 7, 6, 2, 1]) {
      await rollup(degraded.uid, back, back <= 2 ? 60 : 0);
      await rollup(healthy.uid, back, 0);
    }
    const now = Date.now();
    const sample = (at: number, nodes: number, isDegraded: boolean) =>
      pool.query(
        `INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", available, degraded, progressing, metrics)
         VALUES ($1, $2, 1, true, $3, false, $4::jsonb)`,
        [
          degraded.uid,
          new Date(at),
          isDegraded,
          JSON.stringify({
            nodes,
            vcpus: nodes * 4,
            // As the sidecar reports them: degraded, one NodeClaim stuck Launched.
            nodeClaimsByState: isDegraded ? { Ready: nodes, Launched: 1 } : { Ready: nodes },
          }),
        ],
      );
    // Steps 20 h..19 h back reported (healthy, 3 nodes), then nothing until 2 h back (degraded, 5).
    for (let t = now - 20 * HOUR; t < now - 19 * HOUR; t += STEP) await sample(t, 3, false);
    for (let t = now - 2 * HOUR; t < now - 60_000; t += STEP) await sample(t, 5, true);
    const decide = (csr: string, decision: string, reason: string, message: string, back: number) =>
      pool.query(
        `INSERT INTO "CsrDecision" ("clusterId", "csrName", "nodeName", "signerName", decision, reason, message, "decidedAt")
         VALUES ($1, $2, $3, 'kubernetes.io/kube-apiserver-client-kubelet', $4, $5, $6, $7)`,
        [
          degraded.uid,
          csr,
          `ip-10-0-1-${csr.slice(-1)}.ec2.internal`,
          decision,
          reason,
          message,
          new Date(now - back),
        ],
      );
    // The NodeClaims as the ingest stores the sidecar's report of them.
    await pool.query(`UPDATE "ClusterStatus" SET "nodeClaims" = $2::jsonb WHERE "clusterId" = $1`, [
      degraded.uid,
      JSON.stringify([
        {
          name: 'general-x7k2p',
          nodePool: 'general',
          state: 'Pending',
          instanceType: 'm5.large',
          createdAt: new Date(now - 5 * 60_000).toISOString(),
          launchFailure: {
            reason: 'InsufficientCapacityError',
            message: 'no m5.large capacity in us-east-1a',
          },
        },
        {
          name: 'general-q9w4z',
          nodePool: 'general',
          nodeName: 'ip-10-0-1-7.ec2.internal',
          state: 'Ready',
          instanceType: 'm6i.xlarge',
          zone: 'us-east-1b',
          capacityType: 'spot',
          createdAt: new Date(now - 2 * HOUR).toISOString(),
        },
      ]),
    ]);
    await decide(
      'csr-a1',
      'Approved',
      'KarpenterNodeClaim',
      'NodeClaim default-abc12 launched the instance',
      3 * HOUR,
    );
    await decide(
      'csr-a2',
      'Approved',
      'KarpenterNodeClaim',
      'NodeClaim default-def34 launched the instance',
      90 * 60_000,
    );
    await decide(
      'csr-d3',
      'Denied',
      'NoMatchingNodeClaim',
      'no NodeClaim has the instance i-0abc',
      80 * 60_000,
    );
  }

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await pool?.end();
    await api?.app.close();
    await db?.drop();
  }, 60_000);

  it('counts every cluster in exactly one health state on the Overview, generation sync apart', async () => {
    const page = await newPage();
    await textMatches(page.getByTestId('count-clusters'), /^3$/);
    const counts: Record<string, string> = {};
    for (const id of ['healthy', 'progressing', 'degraded', 'stale', 'paused']) {
      counts[id] = (await page.getByTestId(`count-${id}`).textContent()) ?? '';
    }
    expect(counts).toEqual({
      healthy: '1',
      progressing: '0',
      degraded: '1',
      stale: '1',
      paused: '0',
    });
    // In sync is not a health state: it is its own fact, "2 of 3 clusters".
    await expect(page.getByTestId('count-in-sync').count()).resolves.toBe(0);
    await textMatches(page.getByTestId('count-generation-applied'), /^2$/);
    expect(await seriousViolations(page, 'main')).toEqual([]);
  });

  it('draws the fleet history with gaps, and lists what needs attention with links', async () => {
    const page = await newPage();
    const figure = page.getByTestId('chart-fleet-health');
    const svg = figure.locator('svg[role="img"]').first();
    await svg.waitFor();
    expect(await svg.getAttribute('aria-labelledby')).toBeTruthy();
    await screenshot(page, 'overview');
    // 24 hours; 7 with roll-ups; the three in between and the others are gaps, told as such.
    await figure.locator('summary').click();
    const rows = figure.getByTestId('chart-fleet-health-data').locator('tbody tr');
    await expect(rows.count()).resolves.toBe(24);
    const texts = await rows.allTextContents();
    expect(texts.filter((t) => /no data/.test(t))).toHaveLength(17);
    // Two hours back: degraded-0 degraded, healthy-0 healthy, silent-0 stale: 1, 0, 1, 1.
    expect(texts.filter((t) => /\D1\s*0\s*1\s*1$/.test(t))).toHaveLength(2);
    // Bars: one stacked bar per covered hour and state that is not zero, none in the gaps.
    const bars = await figure.locator('svg path[role="presentation"]').count();
    expect(bars).toBeGreaterThanOrEqual(7 * 2);
    await expect(
      page.getByText('Paused is not in history', { exact: false }).count(),
    ).resolves.toBe(1);

    const attention = page.getByTestId('needs-attention');
    await textMatches(
      attention.getByTestId('attention-degraded'),
      /degraded-0.*KarpenterPoolsDegraded/,
    );
    await textMatches(attention.getByTestId('attention-stale'), /silent-0.*no recent report/);
    await attention.getByRole('link', { name: 'degraded-0' }).click();
    await page.getByRole('heading', { name: 'degraded-0', level: 1 }).waitFor();
    expect(await seriousViolations(page, 'main')).toEqual([]);

    // The week: hourly too, the same roll-ups among 168 hours.
    await page.goBack();
    await page.getByRole('button', { name: '7 d' }).click();
    await figure.locator('summary').waitFor();
    // The week's data replaces the day's once its query answers: wait for its last hour.
    const weekRows = page.getByTestId('chart-fleet-health-data').locator('tbody tr');
    await weekRows.nth(167).waitFor({ state: 'attached' });
    await expect(weekRows.count()).resolves.toBe(168);
    expect(await seriousViolations(page, 'main')).toEqual([]);
  });

  it("draws a cluster's conditions, nodes and CSR decisions with gaps, and lists CSR decisions and who changed what", async () => {
    const page = await newPage();
    await page.goto(`${api.url}/clusters/${encodeURIComponent(clusters[0]!.id)}`);
    await page.getByRole('heading', { name: 'degraded-0', level: 1 }).waitFor();
    const conditions = page.getByTestId('chart-conditions');
    await conditions.locator('svg[role="img"]').first().waitFor();
    // The line breaks where there were no reports: its path is more than one segment.
    const pathLocators = await conditions.locator('svg path').all();
    const paths = await Promise.all(
      pathLocators.map(async (p) => (await p.getAttribute('d')) ?? ''),
    );
    const segmented = paths.filter((d) => (d.match(/M/g) ?? []).length >= 2);
    expect(segmented.length).toBeGreaterThanOrEqual(1);
    await page.getByTestId('chart-csr-decisions').locator('svg[role="img"]').first().waitFor();
    await screenshot(page, 'cluster-page');
    await conditions.locator('summary').click();
    const rows = await conditions
      .getByTestId('chart-conditions-data')
      .locator('tbody tr')
      .allTextContents();
    expect(rows).toHaveLength(96);
    const reported = rows.filter((r) => !/no data/.test(r));
    expect(reported.length).toBeGreaterThanOrEqual(10);
    expect(reported.length).toBeLessThanOrEqual(14);
    expect(reported.some((r) => /100%\s*0%\s*0%\s*3\.0$/.test(r))).toBe(true);
    expect(reported.some((r) => /100%\s*0%\s*100%\s*5\.0$/.test(r))).toBe(true);

    // Nodes and NodeClaims by state: the stuck Launched NodeClaim shows beside the Ready ones.
    const nodes = page.getByTestId('chart-nodes');
    await nodes.locator('svg[role="img"]').first().waitFor();
    await nodes.locator('summary').click();
    const nodeTable = nodes.getByTestId('chart-nodes-data');
    await textMatches(nodeTable.locator('thead'), /Nodes\s*Launched\s*Ready/);
    const nodeRows = await nodeTable.locator('tbody tr').allTextContents();
    expect(nodeRows.some((r) => /5\.0\s*1\.0\s*5\.0$/.test(r))).toBe(true);
    expect(nodeRows.some((r) => /3\.0\s*0\.0\s*3\.0$/.test(r))).toBe(true);
    expect(nodeRows.filter((r) => /no data/.test(r)).length).toBeGreaterThan(80);
    const csr = page.getByTestId('chart-csr-decisions');
    const csrSvg = csr.locator('svg[role="img"]').first();
    await csrSvg.waitFor();
    const desc = await csr.locator('svg desc').first().textContent();
    expect(desc).toMatch(
      /3 CSR decisions.*Approved: KarpenterNodeClaim 2.*Denied: NoMatchingNodeClaim 1/,
    );

    // What Karpenter launched and failed to launch, and why.
    const claims = page.getByTestId('node-claims');
    await textMatches(
      claims.getByTestId('nodeclaim-general-x7k2p'),
      /general-x7k2p\s*Launch failed\s*m5\.large.*5 min ago\s*InsufficientCapacityError\s*no m5\.large capacity in us-east-1a/,
    );
    await textMatches(
      claims.getByTestId('nodeclaim-general-q9w4z'),
      /general-q9w4z\s*Ready\s*m6i\.xlarge\s*us-east-1b\s*spot\s*ip-10-0-1-7\.ec2\.internal\s*2 h ago/,
    );
    // The approver's decisions with reasons, and the audit timeline of who changed what.
    const decisions = page.getByTestId('csr-decisions');
    await textMatches(
      decisions.getByTestId('csr-csr-d3'),
      /ip-10-0-1-3.*Denied.*NoMatchingNodeClaim.*no NodeClaim has the instance i-0abc.*ago/,
    );
    await textMatches(
      decisions.getByTestId('csr-csr-a1'),
      /ip-10-0-1-1.*Approved.*KarpenterNodeClaim.*3 h ago/,
    );
    await textMatches(page.getByTestId('audit-timeline'), /bootstrap|admin/i);
    await textMatches(page.getByTestId('generation-sync'), /applied generation 1 of 1/);
    expect(await seriousViolations(page, 'main')).toEqual([]);
  });

  it('shows the same single state in the clusters table, which fits 1280 px with relative dates', async () => {
    const page = await newPage(1280);
    await page.getByRole('link', { name: 'Clusters', exact: true }).first().click();
    const row = page.getByTestId('cluster-row-degraded-0');
    await textMatches(row, /degraded-0\s*Degraded/);
    await textMatches(page.getByTestId('cluster-row-healthy-0'), /healthy-0\s*Healthy/);
    await textMatches(page.getByTestId('cluster-row-silent-0'), /silent-0\s*Stale/);
    await textMatches(row.getByTestId('generation-sync'), /^1 of 1$/);
    // No horizontal scrolling: neither the page nor the table is wider than the viewport.
    const widths = await page.evaluate<{ page: number; viewport: number; table: number }>(`(() => {
      const table = document.querySelector('table[aria-label="Clusters"]');
      return {
        page: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
        table: table.getBoundingClientRect().right,
      };
    })()`);
    expect(widths.page).toBeLessThanOrEqual(widths.viewport);
    expect(widths.table).toBeLessThanOrEqual(widths.viewport);
    // Dates are relative, with the absolute time on hover.
    const registered = row.locator('td[data-label="Registered"] time');
    await textMatches(registered, /^2 d ago$/);
    expect(await registered.getAttribute('title')).toMatch(/\d{4}|\d{1,2}:\d{2}/);
    // The less important columns are one click away, in the row's details.
    await row.getByRole('button', { name: 'Details' }).click();
    await textMatches(
      page.getByTestId('cluster-details-degraded-0'),
      /STANDALONE.*us-east-1.*applied generation 1 of 1/,
    );
    expect(await seriousViolations(page, 'main')).toEqual([]);
    await screenshot(page, 'clusters-1280');
  });
});

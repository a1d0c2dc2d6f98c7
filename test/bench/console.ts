/**
 * The web console at fleet scale: 10,000 clusters, the API and the worker as processes of their
 * own (as deployed), Debian's Chromium through playwright-core. (a) The clusters page: from
 * navigation to the first page's rows in the DOM, each run in a fresh browser context (nothing
 * cached), signed in. (b) A live update: a report for a cluster on the visible page posted to
 * the report endpoint, as its sidecar would, until the row changes in the DOM. Baselines from
 * the same run: the very GraphQL request the page sent, replayed with fetch; and the same
 * update seen by a bare graphql-ws subscriber in Node. Also the initial JavaScript the page
 * loads, against apps/console/budget.json.
 */
import { loadavg } from 'node:os';
import { createClient } from 'graphql-ws';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import WebSocket from 'ws';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { launchChromium } from '../console/browser.js';
import {
  measureInitialAssets,
  readBudget,
  type Budget,
  type InitialAssets,
} from '../console/bundle-size.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';
import { eventually, startProcess } from '../support/processes.js';
import { startApiProcess } from './api-process.js';
import { benchReportToken, seedClusters } from './fleet-seed.js';

const REDIS_URL = 'redis://127.0.0.1:6379/12';
/** The clusters page's size (apps/console/src/pages/Clusters.tsx). */
const PAGE_ROWS = 25;

export interface ConsoleBenchResult {
  clusters: number;
  /** Navigation → the first page's rows in the DOM, per fresh page (ms). */
  firstPageMs: number[];
  /** Where each of those went (ms since navigation). */
  firstPagePhases: FirstPagePhases[];
  /** The same page navigated to again in the same context: the HTTP cache warm (ms). */
  returningMs: number[];
  returningPhases: FirstPagePhases[];
  /** The page's own Clusters request, replayed with fetch from Node (ms). */
  queryMs: number[];
  /** Report POSTed → the row changed in the DOM (ms). */
  updateMs: number[];
  /** Report POSTed → the same change delivered to a graphql-ws subscriber in Node (ms). */
  updateEventMs: number[];
  initial: InitialAssets;
  budget: Budget;
  /** 1-minute load average before and after the run (2 cores shared with other work). */
  loadAverage: { before: number; after: number };
}

/**
 * Runs in every new document: notes when the first clusters row appears (ms since navigation),
 * the long tasks before it, and when each GraphQL operation the page fetches starts and answers,
 * for the breakdown (firstPagePhases).
 */
const WATCH_FIRST_ROWS = `(() => {
  window.__fleetLongTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__fleetLongTasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  window.__fleetOps = [];
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const body = init && typeof init.body === 'string' ? init.body : '';
    const op = /\\b(?:query|mutation)\\s+(\\w+)/.exec(body);
    const entry = { op: op ? op[1] : String(input), start: performance.now() };
    window.__fleetOps.push(entry);
    const answer = fetch.apply(this, arguments);
    answer.then(() => { entry.end = performance.now(); }, () => undefined);
    return answer;
  };
  const seen = () => document.querySelector('[data-testid^="cluster-row-"]');
  const observer = new MutationObserver(() => {
    if (window.__fleetRowsAt === undefined && seen()) {
      window.__fleetRowsAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true });
})()`;

/** What the page's own clocks say of one load, read once its rows are in the DOM. */
const READ_TIMELINE = `JSON.stringify((() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    html: nav.responseEnd,
    domContentLoaded: nav.domContentLoadedEventEnd,
    firstContentfulPaint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
    resources: performance.getEntriesByType('resource').map((e) => ({
      path: new URL(e.name).pathname,
      start: e.startTime,
      end: e.responseEnd,
      transferBytes: e.transferSize,
      bodyBytes: e.encodedBodySize,
    })),
    ops: window.__fleetOps,
    longTasks: window.__fleetLongTasks,
    rows: window.__fleetRowsAt,
  };
})())`;

interface Timeline {
  html: number;
  domContentLoaded: number;
  firstContentfulPaint?: number;
  resources: {
    path: string;
    start: number;
    end: number;
    transferBytes: number;
    bodyBytes: number;
  }[];
  ops: { op: string; start: number; end?: number }[];
  longTasks: [number, number][];
  rows: number;
}

/**
 * One load's phases, in ms since navigation: the HTML in; the assets index.html names fetched;
 * the shell's scripts run (DOMContentLoaded); the first paint; the viewer and Clusters queries
 * sent and answered; the other scripts and styles (the page's chunk and what it imports)
 * fetched; the rows in the DOM. Also the main thread's long tasks before that, and the bytes.
 */
export type FirstPagePhases = Record<
  | 'html'
  | 'shellAssets'
  | 'domContentLoaded'
  | 'firstContentfulPaint'
  | 'viewerSent'
  | 'viewerAnswered'
  | 'clustersSent'
  | 'clustersAnswered'
  | 'pageChunk'
  | 'rows'
  | 'longTasksMs'
  | 'transferKb',
  number
>;

function phases(t: Timeline, initial: ReadonlySet<string>): FirstPagePhases {
  const assets = t.resources.filter((r) => /^\/assets\/.*\.(js|css)$/.test(r.path));
  const shell = assets.filter((r) => initial.has(r.path));
  const later = assets.filter((r) => !initial.has(r.path));
  const op = (name: string) => t.ops.find((o) => o.op === name);
  const last = (list: { end: number }[]) => Math.max(0, ...list.map((r) => r.end));
  return {
    html: t.html,
    shellAssets: last(shell),
    domContentLoaded: t.domContentLoaded,
    firstContentfulPaint: t.firstContentfulPaint ?? Number.NaN,
    viewerSent: op('Viewer')?.start ?? Number.NaN,
    viewerAnswered: op('Viewer')?.end ?? Number.NaN,
    clustersSent: op('Clusters')?.start ?? Number.NaN,
    clustersAnswered: op('Clusters')?.end ?? Number.NaN,
    pageChunk: later.length ? last(later) : Number.NaN,
    rows: t.rows,
    longTasksMs: t.longTasks.filter(([at]) => at < t.rows).reduce((n, [, d]) => n + d, 0),
    transferKb: t.resources.reduce((n, r) => n + r.transferBytes, 0) / 1000,
  };
}

/** Runs in the page: notes (Date.now()) the first change of that row's text from now on. */
const watchRow = (testid: string) => `(() => {
  window.__fleetRowChangedAt = undefined;
  const selector = '[data-testid="${testid}"]';
  const row = document.querySelector(selector);
  if (!row) throw new Error('no row ${testid}');
  const before = row.textContent;
  const observer = new MutationObserver(() => {
    if (document.querySelector(selector)?.textContent !== before) {
      window.__fleetRowChangedAt = Date.now();
      observer.disconnect();
    }
  });
  observer.observe(row.parentElement, { childList: true, subtree: true, characterData: true });
})()`;

function report(uid: string, observed: number, degraded: boolean) {
  const at = new Date().toISOString();
  const condition = (type: string, status: 'True' | 'False', reason: string) => ({
    type,
    status,
    reason,
    message: degraded ? 'bench: NodePool rejected' : 'ok',
    lastTransitionTime: at,
  });
  return {
    clusterId: uid,
    observedGeneration: observed,
    conditions: [
      condition(
        'Available',
        degraded ? 'False' : 'True',
        degraded ? 'NodePoolRejected' : 'AsExpected',
      ),
      condition(
        'Degraded',
        degraded ? 'True' : 'False',
        degraded ? 'NodePoolRejected' : 'AsExpected',
      ),
    ],
    metrics: { nodes: 12, vcpus: 96 },
    csrDecisions: [],
    reportedAt: at,
  };
}

export async function benchConsole({
  clusters = 10_000,
  pageRuns = Number(process.env.BENCH_CONSOLE_RUNS ?? 10),
  updates = 20,
} = {}): Promise<ConsoleBenchResult> {
  const initial = measureInitialAssets(CONSOLE_DIRECTORY);
  const initialPaths = new Set(initial.assets.map((a) => a.path));
  const budget = readBudget();
  const loadBefore = loadavg()[0]!;
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const running: { stop(): Promise<void> }[] = [];
  let browser: Browser | undefined;
  const wsClient: { dispose(): void | Promise<void> }[] = [];
  try {
    const seeded = await seedClusters(sql, clusters, { generation: 1, observed: 1, tokens: 'own' });
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'warn',
      // Seeded clusters reported "now" and never heartbeat: none may turn Stale mid-run.
      HEARTBEAT_SECONDS: '3600',
      STALE_AFTER_SECONDS: '36000',
    };
    const api = await startApiProcess(env);
    running.push(api);
    running.push(startProcess('dist/apps/worker/src/main.js', env, 'worker'));
    const url = api.url;
    // An SRE who may act: the table then carries its selection column too.
    const token = await api.createToken('OPERATOR', 'bench-operator');

    browser = await launchChromium();
    const freshPage = async (): Promise<Page> => {
      const context = await browser!.newContext({ viewport: { width: 1400, height: 900 } });
      context.setDefaultTimeout(15_000);
      // Signed in as the console keeps it: the token in the tab's sessionStorage.
      await context.addInitScript(
        `sessionStorage.setItem('karpenter-fleet.token', ${JSON.stringify(token)})`,
      );
      await context.addInitScript(WATCH_FIRST_ROWS);
      return context.newPage();
    };

    // (a) First page, fresh context each run (a first visit: nothing cached), then the same page
    // navigated to again in that context (a returning SRE: the HTTP cache warm); one warm-up so
    // the API's own caches are not counted.
    const firstPageMs: number[] = [];
    const returningMs: number[] = [];
    const firstPagePhases: FirstPagePhases[] = [];
    const returningPhases: FirstPagePhases[] = [];
    let clustersRequest: string | undefined;
    const load = async (page: Page): Promise<Timeline> => {
      await page.goto(`${url}/clusters`);
      await page.locator('[data-testid^="cluster-row-"]').first().waitFor();
      const rows = await page.locator('[data-testid^="cluster-row-"]').count();
      if (rows !== PAGE_ROWS)
        throw new Error(`the first page shows ${rows} rows, not ${PAGE_ROWS}`);
      const timeline = JSON.parse(await page.evaluate<string>(READ_TIMELINE)) as Timeline;
      if (timeline.rows === undefined) throw new Error('the first rows appeared unobserved');
      return timeline;
    };
    for (let run = -1; run < pageRuns; run++) {
      const page = await freshPage();
      page.on('request', (req) => {
        const body = req.method() === 'POST' ? req.postData() : null;
        if (body?.includes('query Clusters(')) clustersRequest ??= body;
      });
      // BENCH_CONSOLE_CDP_TRACE=<file>: a Chromium performance trace of the first measured visit.
      const tracePath = run === 0 ? process.env.BENCH_CONSOLE_CDP_TRACE : undefined;
      if (tracePath) {
        await browser.startTracing(page, {
          path: tracePath,
          categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'blink'],
        });
      }
      const cold = await load(page);
      if (tracePath) await browser.stopTracing();
      const warm = await load(page);
      // BENCH_CONSOLE_TRACE=1: each load's timeline as the page saw it, for a breakdown by hand.
      if (process.env.BENCH_CONSOLE_TRACE) {
        console.log(`[bench] console run ${run} first visit: ${JSON.stringify(cold)}`);
        console.log(`[bench] console run ${run} returning: ${JSON.stringify(warm)}`);
      }
      if (run >= 0) {
        firstPageMs.push(cold.rows);
        firstPagePhases.push(phases(cold, initialPaths));
        returningMs.push(warm.rows);
        returningPhases.push(phases(warm, initialPaths));
      }
      await page.context().close();
    }
    if (!clustersRequest) throw new Error('the clusters page sent no Clusters query');

    // Baseline: the very request the page sent, replayed from Node.
    const replay = async () => {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: clustersRequest,
      });
      const body = (await res.json()) as { data?: { clusters: { nodes: unknown[] } } };
      if (body.data?.clusters.nodes.length !== PAGE_ROWS) throw new Error('replay failed');
    };
    for (let i = 0; i < 5; i++) await replay();
    const queryMs: number[] = [];
    for (let i = 0; i < pageRuns * 3; i++) {
      const started = performance.now();
      await replay();
      queryMs.push(performance.now() - started);
    }

    // (b) Live updates on the visible page, seen by the browser and by a bare subscriber.
    const page = await freshPage();
    await page.goto(`${url}/clusters`);
    await page.locator('[data-testid^="cluster-row-"]').first().waitFor();
    // The page's subscription is open once the console has said so; give it a moment to be.
    await page.waitForTimeout(1000);
    const delivered = new Map<string, number>();
    const ws = createClient({
      url: `${url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    wsClient.push(ws);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the Node subscriber never connected')),
        15_000,
      );
      ws.on('connected', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.subscribe<{
        clusterChanged: { uid: string; status: { conditions: { type: string; status: string }[] } };
      }>(
        {
          query: `subscription { clusterChanged { uid status { conditions { type status } } } }`,
        },
        {
          next: ({ data }) => {
            const c = data?.clusterChanged;
            if (!c) return;
            const degraded = c.status.conditions.find((x) => x.type === 'Degraded')?.status;
            delivered.set(`${c.uid}:${degraded}`, Date.now());
          },
          error: (err) => reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
          complete: () => undefined,
        },
      );
    });

    const updateMs: number[] = [];
    const updateEventMs: number[] = [];
    const visible = seeded.slice(0, PAGE_ROWS);
    const degradedNow = new Map<string, boolean>();
    for (let n = 0; n < updates + 2; n++) {
      const index = n % visible.length;
      const uid = visible[index]!;
      const degraded = !(degradedNow.get(uid) ?? false);
      const name = `bench-${String(index + 1).padStart(6, '0')}`;
      // Watch that row for any change of its text from now on.
      await page.evaluate(watchRow(`cluster-row-${name}`));
      const posted = Date.now();
      const res = await fetch(`${url}/v1/clusters/${uid}/status`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${benchReportToken(index)}`,
        },
        body: JSON.stringify(report(uid, 1, degraded)),
      });
      if (res.status !== 202) throw new Error(`report refused: ${res.status} ${await res.text()}`);
      degradedNow.set(uid, degraded);
      // Polled from here (the console's CSP forbids waitForFunction's eval); the time itself
      // is the page's own, taken by the observer when the row changed.
      const changedAt = await eventually(
        () => page.evaluate<number | undefined>('window.__fleetRowChangedAt'),
        { timeoutMs: 15_000, intervalMs: 25, what: `the row of ${name} to change` },
      );
      const key = `${uid}:${degraded ? 'True' : 'False'}`;
      await eventually(() => (delivered.has(key) ? true : undefined), {
        timeoutMs: 15_000,
        what: `the Node subscriber's event for ${name}`,
      });
      // The first two warm the path (the worker's and the API's first batch, first event).
      if (n >= 2) {
        updateMs.push(changedAt - posted);
        updateEventMs.push(delivered.get(key)! - posted);
      }
      // Apart, so each sample is one report through an otherwise idle path.
      await new Promise((r) => setTimeout(r, 200));
    }

    return {
      clusters,
      firstPageMs,
      firstPagePhases,
      returningMs,
      returningPhases,
      queryMs,
      updateMs,
      updateEventMs,
      initial,
      budget,
      loadAverage: { before: loadBefore, after: loadavg()[0]! },
    };
  } finally {
    for (const c of wsClient) await c.dispose();
    await browser?.close();
    for (const p of running.reverse()) await p.stop();
    await sql.end();
    await db.drop();
  }
}

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { FakeSidecar } from '../rollouts/fake-sidecar.js';
import { launchChromium, screenshot, seriousViolations, textMatches } from './browser.js';

/**
 * The console's Rollouts and Administration pages in Debian's Chromium, against the real API,
 * worker, PostgreSQL and Redis. Clusters report through fake sidecars (the rollout driver only
 * needs their reports; the emulated-cluster suite covers real sidecars).
 */
describe('the web console: rollouts and administration', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let browser: Browser;
  let operatorToken: string;
  let viewerToken: string;
  let adminToken: string;
  const sidecars: FakeSidecar[] = [];
  const contexts: BrowserContext[] = [];

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(15_000);
    contexts.push(context);
    return context.newPage();
  }

  // One signed-in tab per token, reused by the tests that follow: signing in is not what they test.
  const tabs = new Map<string, Page>();
  async function signIn(token: string): Promise<Page> {
    const open = tabs.get(token);
    if (open) return open;
    const page = await newPage();
    tabs.set(token, page);
    await page.goto(api.url);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    return page;
  }

  /**
   * The new pages' own content (or the open dialog): the shell around them (masthead,
   * navigation) is checked by the console suite, and axe on the whole PatternFly page takes
   * seconds on a loaded 2-core machine.
   */
  async function expectAccessible(page: Page, part = 'main'): Promise<void> {
    expect(await seriousViolations(page, part)).toEqual([]);
  }

  /** Waits until the page's skeletons are gone, so a count of controls is of the loaded page. */
  async function loaded(page: Page, path: string): Promise<void> {
    await page.goto(`${api.url}${path}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.locator('.pf-v6-c-skeleton').first().waitFor({ state: 'detached' });
  }

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      ROLLOUT_TICK_MS: '200',
      HEARTBEAT_SECONDS: '2',
      // Stale after 30 s: a late heartbeat on a loaded machine must not fail the rollout.
      STALE_AFTER_HEARTBEATS: '15',
    });
    for (const [name, labels] of [
      ['prod-a', { env: 'prod' }],
      ['prod-b', { env: 'prod' }],
      ['prod-c', { env: 'prod' }],
      // Two clusters of their own for the approval-gate rollout, clear of the prod rollouts.
      ['stage-a', { env: 'stage' }],
      ['stage-b', { env: 'stage' }],
    ] as const) {
      const res = await api.admin<{
        registerCluster: { reportToken: string; cluster: { uid: string } };
      }>(
        `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { reportToken cluster { uid } } }`,
        {
          input: { name, topology: 'STANDALONE', platform: 'AWS', region: 'us-east-1', labels },
        },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      const { reportToken, cluster } = res.data.registerCluster;
      sidecars.push(new FakeSidecar(cluster.uid, reportToken, api.url, prefix));
    }
    operatorToken = await api.createToken('OPERATOR', { name: 'sre-operator' });
    viewerToken = await api.createToken('VIEWER', { name: 'sre-viewer' });
    adminToken = await api.createToken('ADMIN', { name: 'fleet-admin' });
    browser = await launchChromium();
    // Each cluster reports its registration order, so a rollout judges reporting clusters.
    await eventually(
      async () => {
        const res = await api.admin<{ clusters: { nodes: { inSync: boolean }[] } }>(
          `{ clusters(first: 10) { nodes { inSync } } }`,
        );
        return res.data?.clusters.nodes.every((c) => c.inSync) ? true : undefined;
      },
      { timeoutMs: 20_000, what: 'every cluster in sync at generation 1' },
    );
  }, 90_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await Promise.all(sidecars.map((s) => s.stop()));
    await worker?.close();
    await api?.app.close();
    await db?.drop();
  }, 60_000);

  let rolloutId: string;

  it('starts a rollout from rows picked on the clusters page, follows it live and pauses it', async () => {
    const page = await signIn(operatorToken);
    await loaded(page, '/clusters');
    await page.getByTestId('cluster-row-prod-a').getByRole('checkbox').check();
    await page.getByTestId('cluster-row-prod-c').getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Start rollout (2 selected)' }).click();

    await page.getByRole('heading', { name: 'Start a rollout' }).waitFor();
    await textMatches(page.getByTestId('rollout-picked'), /2 clusters .*prod-a, prod-c/);
    // The default steps (1, 10 %, 50 %, 100 %) over 2 clusters: a canary, then the other.
    await textMatches(page.getByTestId('rollout-preview-total'), /^2 clusters in 2 waves/);
    await textMatches(
      page.getByTestId('rollout-preview-waves'),
      /Wave 1: 1 cluster\s*prod-a.*Wave 2: 1 cluster\s*prod-c/,
    );
    await page.getByLabel('Log level').selectOption('debug');
    // Healthy for an hour: the canary stays APPLYING, so the rollout is still running to pause.
    await page.getByLabel('Healthy for (seconds) before a cluster counts').fill('3600');
    await page.getByLabel('Wave timeout (seconds)').fill('7200');
    await expectAccessible(page);
    await screenshot(page, '10-rollout-new-from-selection');
    await page.getByRole('button', { name: 'Start rollout' }).click();

    await page.getByRole('heading', { name: 'Rollout: log level debug' }).waitFor();
    rolloutId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await page.evaluate('window.noReload = true');
    // The worker applies the canary; the page follows through rolloutChanged alone.
    await textMatches(page.getByTestId('rollout-cluster-prod-a'), /APPLYING\s*2/);
    await textMatches(page.getByTestId('rollout-cluster-prod-c'), /PENDING/);
    expect(await page.getByTestId('rollout-cluster-prod-b').count()).toBe(0);
    await textMatches(page.getByTestId('rollout-state'), /^RUNNING$/);

    await page.getByRole('button', { name: 'Pause rollout' }).click();
    const dialog = page.getByRole('dialog');
    await textMatches(dialog, /No further cluster is changed/);
    await dialog.getByRole('button', { name: 'Pause' }).click();
    await dialog.waitFor({ state: 'detached' });
    await textMatches(page.getByTestId('rollout-state'), /^PAUSED$/);
    await textMatches(page.getByTestId('rollout-reason'), /paused by sre-operator/);
    expect(await page.getByRole('button', { name: 'Resume rollout' }).count()).toBe(1);

    const res = await api.admin<{
      rollout: { state: string; waves: { clusters: { clusterName: string }[] }[] };
    }>(`query($id: ID!) { rollout(id: $id) { state waves { clusters { clusterName } } } }`, {
      id: rolloutId,
    });
    expect(res.data?.rollout.state).toBe('PAUSED');
    expect(res.data?.rollout.waves.map((w) => w.clusters.map((c) => c.clusterName))).toEqual([
      ['prod-a'],
      ['prod-c'],
    ]);

    // Steered elsewhere (here, resumed through the API), the open page follows without reload.
    const resumed = await api.admin(`mutation($id: ID!) { resumeRollout(id: $id) { id } }`, {
      id: rolloutId,
    });
    expect(resumed.errors).toBeUndefined();
    await textMatches(page.getByTestId('rollout-state'), /^RUNNING$/);
    expect(await page.evaluate<boolean | undefined>('window.noReload')).toBe(true);
    await expectAccessible(page);
    await screenshot(page, '11-rollout-live');

    await loaded(page, '/rollouts');
    await textMatches(page.getByTestId(`rollout-row-${rolloutId}`), /log level debug.*RUNNING/);
    await expectAccessible(page);
    await screenshot(page, '12-rollouts');
  });

  it('previews what a selector matches as it is typed, and shows the API refusal of a start', async () => {
    const page = await signIn(operatorToken);
    await loaded(page, '/rollouts/new');
    await page.getByLabel('Label selector').fill('env=prod');
    await textMatches(page.getByTestId('rollout-preview-total'), /^3 clusters in 3 waves/);
    await page.getByLabel('Label selector').fill('env in prod');
    await textMatches(page.getByText('The selector is refused').locator('..'), /labelSelector/);
    await page.getByLabel('Label selector').fill('env=prod');
    await textMatches(page.getByTestId('rollout-preview-total'), /^3 clusters/);
    await page.getByLabel('Karpenter', { exact: true }).selectOption('enable');
    await page.getByRole('button', { name: 'Start rollout' }).click();
    // prod-a and prod-c belong to the running rollout: the API's own CONFLICT message.
    await textMatches(
      page.getByText('The API refused the rollout').locator('..'),
      /cluster prod-[ac] is part of rollout \S+ \(RUNNING\); complete or abort it first/,
    );
    expect(new URL(page.url()).pathname).toBe('/rollouts/new');
  });

  it('holds a rollout at an approval gate: a VIEWER sees it wait, an OPERATOR approves in the browser', async () => {
    // A canary with an approval gate, then the rest: healthy for 2 s, so RUNNING can be seen.
    const strategy = await api.admin(
      `mutation($input: CreateRolloutStrategyInput!) { createRolloutStrategy(input: $input) { name } }`,
      {
        input: {
          name: 'gated-canary',
          waveTimeoutSeconds: 600,
          stages: [
            { count: 1, minHealthySeconds: 0, approval: true },
            { percent: 100, minHealthySeconds: 2 },
          ],
        },
      },
    );
    expect(strategy.errors).toBeUndefined();
    const started = await api.as(operatorToken)<{ startRollout: { id: string } }>(
      `mutation { startRollout(selector: "env=stage", change: { logLevel: error }, strategyName: "gated-canary") { id } }`,
    );
    expect(started.errors).toBeUndefined();
    const id = started.data!.startRollout.id;
    type Gated = {
      state: string;
      waitingStage: number | null;
      waves: { approvedBy: string | null; clusters: { clusterName: string; state: string }[] }[];
    };
    const gated = async () => {
      const res = await api.admin<{ rollout: Gated }>(
        `query($id: ID!) { rollout(id: $id) { state waitingStage waves { approvedBy clusters { clusterName state } } } }`,
        { id },
      );
      return res.data!.rollout;
    };
    const waiting = () =>
      eventually(
        async () => {
          const r = await gated();
          return r.state === 'WAITING_APPROVAL' && r.waitingStage === 0 ? r : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the rollout waiting at stage 0' },
      );
    await waiting();
    const path = `/rollouts/${encodeURIComponent(id)}`;

    // A VIEWER sees what waits, and nothing to press.
    const viewer = await signIn(viewerToken);
    // The strategy itself, read-only, from the menu: its stages and gates.
    await viewer.getByRole('link', { name: 'Strategies' }).click();
    const card = viewer.getByTestId('strategy-gated-canary');
    await textMatches(card, /Wave timeout\s*600 s\s*Health gates\s*Degraded or Stale/);
    await textMatches(
      card.locator('table'),
      /1\s*1 \(cumulative\)\s*0 s\s*—\s*required\s*2\s*100% \(cumulative\)\s*2 s\s*—\s*—/,
    );
    expect(await viewer.locator('[data-mutates]').count()).toBe(0);
    await expectAccessible(viewer);
    await screenshot(viewer, '12b-strategies');
    await loaded(viewer, path);
    await textMatches(
      viewer.getByTestId('rollout-waiting-approval'),
      /Waiting for approval before wave 2\s*Wave 1 \(stage 0 to the API and kfleet\) is healthy/,
    );
    await textMatches(viewer.getByTestId('rollout-state'), /^WAITING APPROVAL$/);
    await textMatches(viewer.getByTestId('wave-0-gates'), /Approval gate: waiting/);
    // The API's reason counts waves from 0: the alert says it instead, in the console's numbers.
    expect(await viewer.getByTestId('rollout-reason').count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await expectAccessible(viewer);
    await screenshot(viewer, '12c-rollout-waiting-approval');
    expect(await viewer.locator('[data-mutates]').count()).toBe(0);
    await loaded(viewer, '/rollouts?state=WAITING_APPROVAL');
    await textMatches(
      viewer.getByTestId(`rollout-row-${id}`),
      /log level error\s*WAITING APPROVAL\s*before wave 2/,
    );
    expect(await viewer.getByTestId('rollout-total').textContent()).toBe('1 rollout');

    const page = await signIn(operatorToken);
    await loaded(page, path);
    await page.evaluate('window.noReload = true');
    await textMatches(page.getByTestId('rollout-waiting-approval'), /before wave 2/);
    await page.getByRole('button', { name: 'Approve' }).click();
    const dialog = page.getByRole('dialog');
    await textMatches(dialog, /Approve wave 2\?.*stage 0/);
    await expectAccessible(page, '[role="dialog"]');
    // Paused elsewhere while the dialog is open: the approval is refused, in the dialog.
    const paused = await api.admin(`mutation($id: ID!) { pauseRollout(id: $id) { id } }`, { id });
    expect(paused.errors).toBeUndefined();
    await textMatches(page.getByTestId('rollout-state'), /^PAUSED$/);
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await textMatches(
      dialog.getByText('The API refused the change').locator('..'),
      /stage 0 is not waiting for approval: the rollout is PAUSED/,
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await gated()).waves[0]!.approvedBy).toBeNull();

    // Resumed, it stops at the same gate again; now the approval goes through.
    const resumed = await api.admin(`mutation($id: ID!) { resumeRollout(id: $id) { id } }`, { id });
    expect(resumed.errors).toBeUndefined();
    await textMatches(page.getByTestId('rollout-state'), /^WAITING APPROVAL$/);
    await page.getByRole('button', { name: 'Approve' }).click();
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await dialog.waitFor({ state: 'detached' });
    await textMatches(page.getByTestId('rollout-state'), /^RUNNING$/);
    expect(await page.getByTestId('rollout-waiting-approval').count()).toBe(0);
    await textMatches(page.getByTestId('wave-0-gates'), /approved by sre-operator/);
    await screenshot(page, '12a-rollout-approved');
    // The second wave goes on; the page follows it to the end without a reload.
    await textMatches(page.getByTestId('rollout-state'), /^COMPLETED$/, 30_000);
    expect(await page.evaluate<boolean | undefined>('window.noReload')).toBe(true);
    const done = await gated();
    expect(done.state).toBe('COMPLETED');
    expect(done.waves.map((w) => w.approvedBy)).toEqual(['sre-operator', null]);
    expect(done.waves.map((w) => w.clusters.map((c) => `${c.clusterName} ${c.state}`))).toEqual([
      ['stage-a HEALTHY'],
      ['stage-b HEALTHY'],
    ]);
  });

  it('starts a rollout with a named strategy chosen in the form, its gates previewed; a refused name is shown at the field; an ADMIN deletes the strategy', async () => {
    // A strategy deleted after the form loaded it: the API's refusal names strategyName.
    const retired = await api.admin(
      `mutation { createRolloutStrategy(input: { name: "retired", stages: [{ percent: 100 }] }) { name } }`,
    );
    expect(retired.errors).toBeUndefined();
    const page = await signIn(operatorToken);
    await loaded(page, '/rollouts/new');
    await page.getByLabel('Label selector').fill('env=stage');
    await page.getByLabel('Log level').selectOption('info');
    await page.getByLabel('Rollout strategy').selectOption('retired');
    await textMatches(page.getByTestId('rollout-preview-total'), /^2 clusters in 1 wave\./);
    const deleted = await api.admin(`mutation { deleteRolloutStrategy(name: "retired") { name } }`);
    expect(deleted.errors).toBeUndefined();
    await page.getByRole('button', { name: 'Start rollout' }).click();
    await textMatches(
      page.getByTestId('rollout-strategy-error'),
      /no rollout strategy named "retired"/,
    );
    expect(new URL(page.url()).pathname).toBe('/rollouts/new');

    // The approval-gated canary of the test before (its rollout is done): what it does, before
    // starting, and the waves it forms with their gates.
    await loaded(page, '/rollouts/new');
    await page.getByLabel('Label selector').fill('env=stage');
    await page.getByLabel('Log level').selectOption('info');
    await page.getByLabel('Rollout strategy').selectOption('gated-canary');
    // The inline fields give way to the chosen strategy's own.
    expect(await page.getByLabel('Waves (cumulative)').count()).toBe(0);
    const summary = page.getByTestId('rollout-named-strategy');
    await textMatches(summary, /Failures tolerated\s*0\s*Wave timeout\s*600 s/);
    await textMatches(
      summary.locator('table'),
      /1\s*1 \(cumulative\)\s*0 s\s*—\s*required\s*2\s*100% \(cumulative\)\s*2 s/,
    );
    await textMatches(page.getByTestId('rollout-preview-total'), /^2 clusters in 2 waves/);
    await textMatches(
      page.getByTestId('rollout-preview-waves'),
      /Wave 1: 1 cluster\s*stage-a\s*healthy for 0 s, then an approval gate\s*Wave 2: 1 cluster\s*stage-b\s*healthy for 2 s/,
    );
    await expectAccessible(page);
    await screenshot(page, '12d-rollout-new-named-strategy');
    await page.getByRole('button', { name: 'Start rollout' }).click();

    await page.getByRole('heading', { name: 'Rollout: log level info' }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await textMatches(page.getByTestId('wave-0'), /Wave 1:.*stage-a/);
    await textMatches(page.getByTestId('wave-1'), /Wave 2:.*stage-b\s*PENDING/);
    // The canary applies and reports through a sidecar process before its gate: 30 s was once
    // not enough in a full three-worker run (2026-12-04), alone it takes a few seconds.
    await textMatches(page.getByTestId('rollout-state'), /^WAITING APPROVAL$/, 60_000);
    const res = await api.admin<{
      rollout: { strategy: { name: string }; waves: { approval: boolean }[] };
    }>(`query($id: ID!) { rollout(id: $id) { strategy { name } waves { approval } } }`, { id });
    expect(res.data?.rollout.strategy.name).toBe('gated-canary');
    expect(res.data?.rollout.waves.map((w) => w.approval)).toEqual([true, false]);
    // Clear of the tests that follow.
    const aborted = await api.admin(`mutation($id: ID!) { abortRollout(id: $id) { id } }`, { id });
    expect(aborted.errors).toBeUndefined();

    // An OPERATOR is offered no delete (the API would refuse it); an ADMIN deletes the strategy
    // from the Strategies page, and the rollout keeps its copy.
    await loaded(page, '/strategies');
    await page.getByTestId('strategy-gated-canary').waitFor();
    expect(await page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
    const admin = await signIn(adminToken);
    await loaded(admin, '/strategies');
    await admin.getByRole('button', { name: 'Delete gated-canary' }).click();
    const dialog = admin.getByRole('dialog');
    await textMatches(dialog, /Delete gated-canary\?.*keep the\s*copy/);
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog.waitFor({ state: 'detached' });
    await admin.getByTestId('strategy-gated-canary').waitFor({ state: 'detached' });
    const after = await api.admin<{
      rolloutStrategies: { name: string }[];
      rollout: { strategy: { name: string } };
    }>(`query($id: ID!) { rolloutStrategies { name } rollout(id: $id) { strategy { name } } }`, {
      id,
    });
    expect(after.data?.rolloutStrategies).toEqual([]);
    expect(after.data?.rollout.strategy.name).toBe('gated-canary');
  }, 120_000);

  it('creates a token with role, scope and expiry, shows its secret once, and revokes it', async () => {
    const page = await signIn(adminToken);
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await page.getByTestId('token-sre-viewer').waitFor();
    await page.getByText('No dead letters').waitFor();
    await expectAccessible(page);
    await screenshot(page, '13-administration');

    await page.locator('#token-name').fill('ci-reader');
    await page.locator('#token-role').selectOption('VIEWER');
    await page.locator('#token-scope').fill('env=prod');
    await page.locator('#token-expiry').selectOption('7');
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog');
    await textMatches(dialog, /shown only once/);
    const secret = await dialog.getByLabel('the token').inputValue();
    expect(secret.length).toBeGreaterThan(20);
    await expectAccessible(page, '[role="dialog"]');
    await screenshot(page, '14-token-secret');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Shown once: nothing on the page or in the tab's storage holds it any more.
    expect(await page.content()).not.toContain(secret);
    expect(await page.evaluate<string[]>('Object.values(sessionStorage)')).not.toContain(secret);

    const row = page.getByTestId('token-ci-reader');
    await textMatches(row, /ci-reader\s*VIEWER\s*env=prod\s*Active/);
    const viewer = await api.as(secret)<{ viewer: { role: string; labelSelector: string } }>(
      `{ viewer { role labelSelector expiresAt } }`,
    );
    expect(viewer.data?.viewer).toMatchObject({ role: 'VIEWER', labelSelector: 'env=prod' });

    await row.getByRole('button', { name: 'Revoke token ci-reader' }).click();
    await textMatches(page.getByRole('dialog'), /cannot be undone/);
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await textMatches(row, /Revoked/);
    await eventually(
      async () => {
        const res = await api.as(secret)(`{ viewer { role } }`);
        return res.errors?.[0]?.extensions?.code === 'UNAUTHENTICATED' ? true : undefined;
      },
      { timeoutMs: 10_000, what: 'the revoked token refused' },
    );
  });

  it('registers a cluster and shows its bootstrap manifest once', async () => {
    const page = await signIn(adminToken);
    await loaded(page, '/administration');
    await page.locator('#register-name').fill('edge-1');
    await page.locator('#register-region').fill('eu-west-1');
    await page.locator('#register-labels').fill('env=edge, tier=bronze');
    await page.getByRole('button', { name: 'Register cluster' }).click();
    const dialog = page.getByRole('dialog');
    await textMatches(dialog, /edge-1 registered/);
    const manifest = (await dialog.getByTestId('bootstrap-manifest-value').textContent()) ?? '';
    expect(manifest).toMatch(/kind: Secret/);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    const res = await api.admin<{ clusters: { nodes: { name: string; labels: unknown }[] } }>(
      `{ clusters(first: 5, filter: { nameContains: "edge-1" }) { nodes { name labels } } }`,
    );
    expect(res.data?.clusters.nodes).toEqual([
      { name: 'edge-1', labels: { env: 'edge', tier: 'bronze' } },
    ]);

    // A refused registration shows the API's reason at the field, and registers nothing.
    await page.locator('#register-name').fill('Bad_Name');
    await page.getByRole('button', { name: 'Register cluster' }).click();
    await textMatches(page.getByTestId('register-name-error'), /input\.name/);
  });

  it('registers a Cluster API cluster and sets its allowed instance types, refusals at the field', async () => {
    const page = await signIn(adminToken);
    await loaded(page, '/administration');
    await page.locator('#register-name').fill('capi-west');
    await page.locator('#register-platform').selectOption('CAPI');
    await page.locator('#register-region').fill('us-west-2');
    // Without the Cluster API cluster's name the API refuses, at that field.
    await page.getByRole('button', { name: 'Register cluster' }).click();
    await textMatches(page.getByTestId('register-capi-name-error'), /input\.clusterApiName/);
    await page.locator('#register-capi-name').fill('capi-west-x7k2p');
    await page.locator('#register-management').fill('mgmt-west');
    await page.getByRole('button', { name: 'Register cluster' }).click();
    const dialog = page.getByRole('dialog');
    await textMatches(dialog, /capi-west registered/);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    type Capi = {
      id: string;
      platform: string;
      clusterApiName: string;
      clusterApiNamespace: string;
      infrastructureProvider: string;
      managementCluster: string;
      karpenter: { allowedInstanceTypes: string[] };
    };
    const capi = async () => {
      const res = await api.admin<{ clusters: { nodes: Capi[] } }>(
        `{ clusters(first: 5, filter: { nameContains: "capi-west" }) { nodes { id platform clusterApiName
          clusterApiNamespace infrastructureProvider managementCluster karpenter { allowedInstanceTypes } } } }`,
      );
      expect(res.data?.clusters.nodes).toHaveLength(1);
      return res.data!.clusters.nodes[0]!;
    };
    const registered = await capi();
    expect(registered).toMatchObject({
      platform: 'CAPI',
      clusterApiName: 'capi-west-x7k2p',
      clusterApiNamespace: 'openshift-cluster-api',
      infrastructureProvider: 'aws',
      managementCluster: 'mgmt-west',
      karpenter: { allowedInstanceTypes: [] },
    });

    await loaded(page, `/clusters/${encodeURIComponent(registered.id)}`);
    await textMatches(page.getByTestId('capi-cluster'), /openshift-cluster-api\/capi-west-x7k2p/);
    await page.getByRole('button', { name: 'Configure Karpenter' }).click();
    const modal = page.getByRole('dialog');
    // A name the API refuses: back on the form with the reason at the field, nothing saved.
    await modal.locator('#karpenter-instance-types').fill('m6i.large, not/a-type');
    await modal.getByRole('button', { name: 'Review' }).click();
    await textMatches(modal.getByTestId('karpenter-change-steps'), /m6i\.large, not\/a-type/);
    await modal.getByRole('button', { name: 'Apply' }).click();
    await textMatches(
      modal.getByTestId('karpenter-instance-types-error'),
      /input\.allowedInstanceTypes.*instance type name/,
    );
    expect((await capi()).karpenter.allowedInstanceTypes).toEqual([]);
    await modal.locator('#karpenter-instance-types').fill('m6i.large, c6i.xlarge');
    await modal.getByRole('button', { name: 'Review' }).click();
    await modal.getByRole('button', { name: 'Apply' }).click();
    await modal.waitFor({ state: 'detached' });
    await textMatches(page.getByTestId('allowed-instance-types'), /^m6i\.large, c6i\.xlarge$/);
    expect((await capi()).karpenter.allowedInstanceTypes).toEqual(['m6i.large', 'c6i.xlarge']);
  });

  it('offers no admin control to a VIEWER or an OPERATOR, and a VIEWER no rollout control', async () => {
    // The same page for an admin has them: the checks below can fail.
    const admin = await signIn(adminToken);
    await loaded(admin, '/administration');
    await admin.getByTestId('token-sre-viewer').waitFor();
    expect(await admin.locator('[data-mutates]').count()).toBeGreaterThanOrEqual(3);

    for (const [token, role] of [
      [viewerToken, 'VIEWER'],
      [operatorToken, 'OPERATOR'],
    ] as const) {
      const page = await signIn(token);
      expect(await page.getByRole('link', { name: 'Administration' }).count()).toBe(0);
      await loaded(page, '/administration');
      await textMatches(page.locator('.pf-v6-c-alert'), new RegExp(`ADMIN role.*${role}`));
      expect(await page.locator('[data-mutates]').count()).toBe(0);
      for (const name of ['Create token', 'Register cluster', 'Redrive all']) {
        expect(await page.getByRole('button', { name }).count()).toBe(0);
      }
      if (role === 'VIEWER') {
        for (const path of [
          '/rollouts',
          `/rollouts/${encodeURIComponent(rolloutId)}`,
          '/clusters',
        ]) {
          await loaded(page, path);
          expect(await page.locator('[data-mutates]').count()).toBe(0);
          // No row to select for a rollout (the "Drifted only" filter is a checkbox too).
          expect(await page.getByRole('table').getByRole('checkbox').count()).toBe(0);
        }
        await screenshot(page, '15-clusters-as-viewer');
      }
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  createTestDatabase,
  eventually,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { launchChromium, screenshot, seriousViolations, textMatches } from './browser.js';

const NODE_CLASS_REF = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };

/**
 * Plans in the console (issue 21): the NodePool editor's Preview (planChange, dry-run by the real
 * sidecar process on the emulated standalone AWS cluster's API server, nothing written) then Apply
 * (applyPlan), and the migration plan card with its Apply (MIGRATE). Real API, worker, PostgreSQL,
 * Redis and Chromium, as console.e2e-spec.ts. Needs the build (dist/apps/console).
 */
describe('the web console: plans and the migration plan', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess;
  let browser: Browser;
  let operatorToken: string;
  let viewerToken: string;
  let clusterId: string;
  const contexts: BrowserContext[] = [];

  type State = {
    cluster: {
      inSync: boolean;
      karpenter: { generation: number; enabled: boolean; clusterAutoscalerMode: string };
      nodePools: { name: string }[];
    };
  };
  const state = async () => {
    const res = await api.admin<State>(
      `query($id: ID!) { cluster(id: $id) { inSync
        karpenter { generation enabled clusterAutoscalerMode } nodePools { name } } }`,
      { id: clusterId },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.cluster;
  };
  const inSyncAt = (generation: number) =>
    eventually(
      async () => {
        const c = await state();
        return c.inSync && c.karpenter.generation === generation ? c : undefined;
      },
      { timeoutMs: 30_000, what: `in sync at generation ${generation}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output().slice(-4000)}`);
    });

  async function signedIn(token: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(15_000);
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(api.url);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    await page.goto(`${api.url}/clusters/${encodeURIComponent(clusterId)}`);
    return page;
  }

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    // The standalone AWS fixture: a ClusterAutoscaler, MachineAutoscalers and their MachineSets.
    cluster = await startEmulatedCluster();
    const registered = await registerCluster(api.admin, { name: 'prod-east' });
    clusterId = registered.id;
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });
    operatorToken = await api.createToken('OPERATOR', { name: 'sre-operator' });
    viewerToken = await api.createToken('VIEWER', { name: 'sre-viewer' });
    browser = await launchChromium();
    await inSyncAt(1);
    // Karpenter enabled (the Cluster Autoscaler kept), and a NodePool that sets expireAfter: Never.
    const enable = await api.admin(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { name } }`,
      { id: clusterId },
    );
    expect(enable.errors).toBeUndefined();
    const pool = await api.admin(
      `mutation($id: ID!, $spec: JSON!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: $spec }) { name } }`,
      {
        id: clusterId,
        spec: {
          template: {
            spec: {
              nodeClassRef: NODE_CLASS_REF,
              requirements: [
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              expireAfter: 'Never',
            },
          },
          limits: { cpu: '100' },
        },
      },
    );
    expect(pool.errors).toBeUndefined();
    await inSyncAt(3);
    await eventually(() => cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general'), {
      timeoutMs: 10_000,
      what: 'NodePool general applied',
    });
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  }, 60_000);

  it("previews a NodePool change with the API server's defaults, writing nothing, then applies that plan", async () => {
    const page = await signedIn(operatorToken);
    await page.getByRole('button', { name: 'Edit NodePool general' }).click();
    const dialog = page.getByRole('dialog');
    // expireAfter left out: the API server's default (720h) replaces Never.
    const spec = [
      'template:',
      '  spec:',
      '    nodeClassRef:',
      '      group: karpenter.k8s.aws',
      '      kind: EC2NodeClass',
      '      name: default',
      '    requirements:',
      '      - key: karpenter.sh/capacity-type',
      '        operator: In',
      '        values: [on-demand]',
      'limits:',
      '  cpu: "200"',
      '',
    ].join('\n');
    await dialog.locator('#nodepool-spec').fill(spec);
    const rvBefore = cluster.kube.resourceVersion;
    const live = cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general') as {
      metadata: { resourceVersion: string };
    };
    await dialog.getByRole('button', { name: 'Preview' }).click();
    // The editor gives way to the preview (the spec is kept for Back).
    await dialog.locator('#nodepool-spec').waitFor({ state: 'detached' });
    const planned = dialog.getByTestId('planned-NodePool-general');
    const text = await textMatches(planned, /720h/, 20_000);
    expect(text).toContain('changed');
    expect(text).toMatch(/\.spec\.limits\.cpu\s*"100"\s*"200"/);
    expect(text).toMatch(/\.spec\.template\.spec\.expireAfter\s*"Never"\s*"720h"/);
    expect(await dialog.getByTestId('plan-unchanged').textContent()).toMatch(/^Unchanged \(\d+\)/);
    expect(await seriousViolations(page, '[role="dialog"]')).toEqual([]);
    await screenshot(page, 'plans-01-nodepool-preview');
    // Nothing was written: the emulator's resourceVersions did not move, desired state neither.
    expect(cluster.kube.resourceVersion).toBe(rvBefore);
    expect(
      (
        cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general') as {
          metadata: { resourceVersion: string };
        }
      ).metadata.resourceVersion,
    ).toBe(live.metadata.resourceVersion);
    expect((await state()).karpenter.generation).toBe(3);

    await dialog.getByRole('button', { name: 'Apply this plan' }).click();
    await dialog.waitFor({ state: 'detached' });
    await inSyncAt(4);
    const applied = await eventually(
      () => {
        const p = cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general') as
          | { spec: { limits: { cpu: string }; template: { spec: { expireAfter: string } } } }
          | undefined;
        return p?.spec.limits.cpu === '200' ? p : undefined;
      },
      { timeoutMs: 10_000, what: 'the previewed NodePool applied' },
    );
    expect(applied.spec.template.spec.expireAfter).toBe('720h');
  });

  it("previews the Karpenter dialog's change on the cluster, and goes back without applying", async () => {
    const page = await signedIn(operatorToken);
    await page.getByRole('button', { name: 'Configure Karpenter' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('radio', { name: /^Migrate/ }).check();
    await dialog.getByRole('button', { name: 'Review' }).click();
    await dialog.getByRole('button', { name: 'Preview on the cluster' }).click();
    const preview = dialog.getByTestId('plan-preview');
    const text = await textMatches(preview, /Unchanged \(\d+\)|changed|NOT_PLANNED|FAILED/, 20_000);
    await screenshot(page, 'plans-01b-karpenter-preview');
    expect(text).toMatch(/Unchanged \(\d+\): .*NodePool\/general/);
    expect(await dialog.getByTestId('plan-state').textContent()).toMatch(
      /^PLANNED against desired generation 4/,
    );
    expect(await dialog.getByRole('button', { name: 'Apply this plan' }).isEnabled()).toBe(true);
    const before = await state();
    await dialog.getByRole('button', { name: 'Back' }).click();
    await dialog.getByRole('button', { name: 'Preview on the cluster' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await state()).toEqual(before);
  });

  it("shows the API's CONFLICT when the cluster moved between Preview and Apply, applying nothing", async () => {
    const page = await signedIn(operatorToken);
    await page.getByRole('button', { name: 'Edit NodePool general' }).click();
    const dialog = page.getByRole('dialog');
    const spec = await dialog.locator('#nodepool-spec').inputValue();
    await dialog.locator('#nodepool-spec').fill(spec.replace('cpu: "200"', 'cpu: "300"'));
    await dialog.getByRole('button', { name: 'Preview' }).click();
    await textMatches(dialog.getByTestId('planned-NodePool-general'), /"300"/, 20_000);
    // Someone else changes the cluster meanwhile.
    const moved = await api.admin(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: debug }) { karpenter { generation } } }`,
      { id: clusterId },
    );
    expect(moved.errors).toBeUndefined();
    // Settled first: the sidecar applying generation 5 would otherwise flip inSync under the check.
    const before = await inSyncAt(5);
    await dialog.getByRole('button', { name: 'Apply this plan' }).click();
    const alert = await textMatches(dialog.locator('.pf-v6-c-alert'), /refused/);
    expect(alert).toContain(
      'cluster prod-east is at generation 5, not the 4 the plan was computed against',
    );
    await screenshot(page, 'plans-01c-conflict');
    expect(await state()).toEqual(before);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('shows the migration plan to a VIEWER without its Apply', async () => {
    const page = await signedIn(viewerToken);
    const card = page.getByTestId('migration-plan');
    await textMatches(
      card.getByTestId('proposed-worker'),
      /prod-east-7xk2p-worker-us-east-1c/,
      30_000,
    );
    expect(await card.getByRole('button', { name: /Apply migration plan/ }).count()).toBe(0);
    expect(await page.locator('[data-mutates]').count()).toBe(0);
  });

  it('shows the migration plan and applies it: NodePools created, Karpenter enabled, MIGRATE', async () => {
    const page = await signedIn(operatorToken);
    const card = page.getByTestId('migration-plan');
    const row = await textMatches(
      card.getByTestId('proposed-worker'),
      /prod-east-7xk2p-worker-us-east-1a.*prod-east-7xk2p-worker-us-east-1b.*prod-east-7xk2p-worker-us-east-1c/,
      30_000,
    );
    expect(row).toContain('instance types m6i.xlarge');
    expect(await card.getByTestId('not-expressible').textContent()).toContain(
      'MachineSet/prod-east-7xk2p-worker-us-east-1a: minimum size 1',
    );
    expect(await seriousViolations(page, '[data-testid="migration-plan"]')).toEqual([]);
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, 'plans-02-migration-plan');

    const before = await state();
    expect(before.karpenter.clusterAutoscalerMode).toBe('KEEP');
    await card.getByRole('button', { name: 'Apply migration plan (MIGRATE)' }).click();
    const dialog = page.getByRole('dialog');
    const steps = await dialog.getByTestId('migration-steps').textContent();
    expect(steps).toContain('NodePools created: worker');
    expect(steps).toContain('Karpenter is enabled');
    expect(steps).toContain('both autoscalers run side by side');
    expect(await dialog.textContent()).toContain('(DISABLE) is a later, separate step');
    expect(await seriousViolations(page, '[role="dialog"]')).toEqual([]);
    await screenshot(page, 'plans-03-migration-confirm');
    await dialog.getByRole('button', { name: 'Apply migration plan' }).click();
    await dialog.waitFor({ state: 'detached' });
    const after = await inSyncAt(before.karpenter.generation + 1);
    expect(after.karpenter).toMatchObject({ enabled: true, clusterAutoscalerMode: 'MIGRATE' });
    expect(after.nodePools.map((p) => p.name)).toContain('worker');
    await eventually(() => cluster.kube.get('karpenter.sh/v1', 'NodePool', 'worker'), {
      timeoutMs: 10_000,
      what: 'NodePool worker on the cluster',
    });
  });
});

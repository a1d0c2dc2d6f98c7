import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { launchChromium, screenshot, seriousViolations, textMatches } from './browser.js';

const NODE_POOL = {
  template: {
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
    },
  },
  limits: { cpu: '64' },
};

type Field = { field: string; value: unknown; source: string; profile: string | null };
type Effective = {
  cluster: {
    karpenter: { generation: number; logLevel: string };
    effectiveState: { fields: Field[]; overrides: string[] };
  };
};

/**
 * Profiles in the console (issue 22): the Profiles page and a profile's detail, the cluster
 * page's effective state with its sources, and Reset of an override, in Debian's Chromium against
 * the real API, PostgreSQL and Redis. No worker: the cluster is registered after the profile, so
 * registration binds it (no rollout needed), and the one rollout the suite starts is only looked at.
 */
describe('the web console: profiles and effective state', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let page: Page;
  let operatorToken: string;
  let viewerToken: string;
  let clusterId: string;

  const effective = async (): Promise<Effective['cluster']> => {
    const res = await api.admin<Effective>(
      `query($id: ID!) { cluster(id: $id) { karpenter { generation logLevel }
        effectiveState { fields { field value source profile } overrides } } }`,
      { id: clusterId },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.cluster;
  };
  const fieldOf = (state: Effective['cluster'], field: string) =>
    state.effectiveState.fields.find((f) => f.field === field);
  const mutate = async (query: string, variables: Record<string, unknown>) => {
    const res = await api.admin(query, variables);
    expect(res.errors).toBeUndefined();
    return res.data;
  };

  async function signedIn(token: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(15_000);
    contexts.push(context);
    const tab = await context.newPage();
    await tab.goto(api.url);
    await tab.getByLabel('API token').fill(token);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    return tab;
  }

  async function open(path: string, tab = page): Promise<void> {
    await tab.goto(`${api.url}${path}`);
    await tab.getByRole('heading', { level: 1 }).first().waitFor();
    await tab.locator('.pf-v6-c-skeleton').first().waitFor({ state: 'detached' });
  }

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    // The profile first: it matches no cluster yet, so it is written without a rollout.
    await mutate(
      `mutation($input: CreateProfileInput!) { createProfile(input: $input) { profile { name } } }`,
      {
        input: {
          name: 'prod-base',
          selector: 'env=prod',
          priority: 100,
          spec: {
            // Without Karpenter enabled anywhere, MIGRATE is not taken: listed as ignored.
            clusterAutoscalerMode: 'MIGRATE',
            logLevel: 'debug',
            featureGates: { Drift: true, SpotToSpotConsolidation: true },
            nodePools: { general: NODE_POOL },
          },
        },
      },
    );
    // Registered into the selector: bound to prod-base@1 in its registration.
    const registered = await api.admin<{ registerCluster: { cluster: { id: string } } }>(
      `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } } }`,
      {
        input: {
          name: 'prod-east',
          topology: 'STANDALONE',
          platform: 'AWS',
          region: 'us-east-1',
          labels: { env: 'prod' },
        },
      },
    );
    if (!registered.data) throw new Error(JSON.stringify(registered.errors));
    clusterId = registered.data.registerCluster.cluster.id;
    // The SRE's own log level on this cluster: an override over the profile's.
    await mutate(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: error }) { name } }`,
      { id: clusterId },
    );
    operatorToken = await api.createToken('OPERATOR', { name: 'sre-operator' });
    viewerToken = await api.createToken('VIEWER', { name: 'sre-viewer' });
    browser = await launchChromium();
    page = await signedIn(operatorToken);
  }, 60_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await api?.app.close();
    await db?.drop();
  }, 30_000);

  it('lists the profile, and its detail shows its spec, revisions and bound clusters', async () => {
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Profiles' })
      .click();
    await page.getByRole('heading', { name: 'Profiles', level: 1 }).waitFor();
    const row = page.getByTestId('profile-row-prod-base');
    await textMatches(row, /prod-base.*env=prod.*100.*1.*1 \(all on revision 1\)/);
    expect(await seriousViolations(page, 'main')).toEqual([]);

    await row.getByRole('link', { name: 'prod-base' }).click();
    await page.getByRole('heading', { name: 'prod-base', level: 1 }).waitFor();
    await textMatches(page.getByTestId('profile-setting-logLevel'), /Log level\s*debug/);
    await textMatches(page.getByTestId('profile-nodePools-general'), /capacity-type[\s\S]*spot/);
    await textMatches(page.getByTestId('profile-cluster-prod-east'), /prod-east\s*1 \(current\)/);
    await textMatches(page.getByTestId('profile-revision-1'), /1\s*env=prod\s*100/);
    expect(await page.getByText('none yet: no cluster was affected').count()).toBe(1);
    expect(await seriousViolations(page, 'main')).toEqual([]);
    await screenshot(page, 'profile');

    // The cluster bound links to its page.
    await page.getByTestId('profile-cluster-prod-east').getByRole('link').click();
    await page.getByRole('heading', { name: 'prod-east', level: 1 }).waitFor();
  });

  it('shows each field of the effective state with its source', async () => {
    await open(`/clusters/${encodeURIComponent(clusterId)}`);
    await textMatches(page.getByTestId('effective-source-logLevel'), /^override$/);
    await textMatches(page.getByTestId('effective-value-logLevel'), /^error$/);
    await textMatches(page.getByTestId('effective-source-featureGates'), /^profile prod-base@1$/);
    await textMatches(
      page.getByTestId('effective-value-featureGates'),
      /^\{"Drift":true,"SpotToSpotConsolidation":true\}$/,
    );
    await textMatches(
      page.getByTestId('effective-source-nodePools.general'),
      /^profile prod-base@1$/,
    );
    await textMatches(page.getByTestId('effective-source-driftPolicy'), /^default$/);
    await textMatches(page.getByTestId('effective-source-clusterAutoscalerMode'), /^default$/);
    await textMatches(
      page.getByTestId('ignored-clusterAutoscalerMode'),
      /Cluster Autoscaler mode\s*prod-base\s*MIGRATE only with Karpenter enabled/,
    );
    await textMatches(
      page.getByTestId('bound-profiles'),
      /Composed from prod-base@1 \(priority 100\)/,
    );
    // Only the override has a Reset.
    const resets = page.getByRole('button', { name: /^Reset the override of / });
    expect(await resets.count()).toBe(1);
    expect(await resets.first().getAttribute('aria-label')).toBe('Reset the override of Log level');
    expect(await seriousViolations(page, 'main')).toEqual([]);
    await screenshot(page, 'cluster-effective-state');

    // A VIEWER reads the same sources and is offered no Reset (the API would refuse it).
    const viewer = await signedIn(viewerToken);
    await open(`/clusters/${encodeURIComponent(clusterId)}`, viewer);
    await textMatches(viewer.getByTestId('effective-source-logLevel'), /^override$/);
    expect(await viewer.getByRole('button', { name: /^Reset the override of / }).count()).toBe(0);
  });

  it('shows the refusal when the cluster changed since the Reset dialog opened, then resets', async () => {
    const before = await effective();
    await page.getByRole('button', { name: 'Reset the override of Log level' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset Log level on prod-east?' });
    await dialog.waitFor();
    expect(await seriousViolations(page, '[role="dialog"]')).toEqual([]);
    // Someone else changes the cluster while the dialog is open: a new generation.
    await mutate(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { featureGates: { Drift: false } }) { name } }`,
      { id: clusterId },
    );
    await dialog.getByRole('button', { name: 'Reset' }).click();
    await textMatches(
      dialog.locator('.pf-v6-c-alert'),
      new RegExp(
        `generation ${before.karpenter.generation + 1}, not the expected ${before.karpenter.generation}`,
      ),
    );
    expect((await effective()).karpenter.logLevel).toBe('error');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The page has followed the change (its subscription): feature gates are now an override too.
    await textMatches(page.getByTestId('effective-source-featureGates'), /^override$/);
    await page.getByRole('button', { name: 'Reset the override of Log level' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reset' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await textMatches(page.getByTestId('effective-source-logLevel'), /^profile prod-base@1$/);
    await textMatches(page.getByTestId('effective-value-logLevel'), /^debug$/);
    await textMatches(
      page.getByTestId('generation'),
      new RegExp(`^${before.karpenter.generation + 2}$`),
    );

    // The API agrees: the profile's value is the effective one, and it is what the cluster is given.
    const after = await effective();
    expect(fieldOf(after, 'logLevel')).toMatchObject({
      value: 'debug',
      source: 'profile',
      profile: 'prod-base',
    });
    expect(after.karpenter.logLevel).toBe('debug');
    expect(after.karpenter.generation).toBe(before.karpenter.generation + 2);
    expect(after.effectiveState.overrides).toEqual(['featureGates']);
  });

  it("links a profile's rollout from its detail", async () => {
    const res = await api.admin<{ updateProfile: { rollout: { id: string } | null } }>(
      `mutation { updateProfile(name: "prod-base", input: { spec: { logLevel: "info" } }) { rollout { id } } }`,
    );
    const rolloutId = res.data?.updateProfile.rollout?.id;
    expect(rolloutId).toBeDefined();
    await open('/profiles/prod-base');
    await textMatches(page.getByTestId('profile-revision'), /^2$/);
    // No worker runs the rollout: prod-east is still on revision 1.
    await textMatches(page.getByTestId('profile-bound'), /^1 \(0 on revision 2\)$/);
    await textMatches(page.getByTestId('profile-cluster-prod-east'), /prod-east\s*1$/);
    await textMatches(page.getByTestId('profile-rollout'), /profile prod-base@2\s*RUNNING/);
    // Followed live while it runs: paused elsewhere, the page shows it without a reload. The
    // subscription has no first answer, so a pause sent before it is registered on the API goes
    // unseen: until the page shows it, resume and pause again (each a new event).
    const pauseRollout = `mutation($id: ID!) { pauseRollout(id: $id) { state } }`;
    await mutate(pauseRollout, { id: rolloutId });
    for (let attempt = 1; ; attempt++) {
      try {
        await textMatches(
          page.getByTestId('profile-rollout'),
          /profile prod-base@2\s*PAUSED/,
          2_000,
        );
        break;
      } catch (err) {
        if (attempt === 5) throw err;
        await mutate(`mutation($id: ID!) { resumeRollout(id: $id) { state } }`, { id: rolloutId });
        await mutate(pauseRollout, { id: rolloutId });
      }
    }
    await page.getByTestId('profile-rollout').getByRole('link').click();
    await page.waitForURL(`${api.url}/rollouts/${encodeURIComponent(rolloutId!)}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  });
});

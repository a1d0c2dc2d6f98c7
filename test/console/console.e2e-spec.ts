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
import { ClusterClient } from '../../apps/sidecar/src/kube/cluster-client.js';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { fixtureInfrastructure } from '../support/ocp-aws-standalone.js';
import { launchChromium, screenshot, seriousViolations, textMatches } from './browser.js';

/**
 * The console in a real browser (Debian's Chromium through playwright-core), served by the real
 * API, against the worker, PostgreSQL, Redis and an emulated OpenShift cluster with its real
 * sidecar process. Needs the build (npm test builds first): the console is dist/apps/console.
 */
describe('the web console', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess;
  let browser: Browser;
  let operatorToken: string;
  let viewerToken: string;
  let prodId: string;
  const contexts: BrowserContext[] = [];

  const CLUSTER_STATE = `query($id: ID!) { cluster(id: $id) {
    inSync karpenter { generation enabled clusterAutoscalerMode } nodePools { name } } }`;
  type ClusterState = {
    cluster: {
      inSync: boolean;
      karpenter: { generation: number; enabled: boolean; clusterAutoscalerMode: string };
      nodePools: { name: string }[];
    };
  };
  const clusterState = async () => {
    const res = await api.admin<ClusterState>(CLUSTER_STATE, { id: prodId });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.cluster;
  };

  async function newPage(): Promise<Page> {
    // AxeBuilder needs a page from its own context; a context per user also keeps sessions apart.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(15_000);
    contexts.push(context);
    return context.newPage();
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(api.url);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
  }

  async function expectAccessible(page: Page): Promise<void> {
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await seriousViolations(page)).toEqual([]);
  }

  const clusterUrl = () => `${api.url}/clusters/${encodeURIComponent(prodId)}`;

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedCluster();
    const prod = await registerCluster(api.admin, {
      name: 'prod-east',
      labels: { env: 'prod', tier: 'gold' },
    });
    prodId = prod.id;
    // Registered only: it never reports, which is fine for a row the filter must hide.
    await registerCluster(api.admin, { name: 'staging-west', labels: { env: 'staging' } });
    sidecar = startSidecarProcess(cluster, prod, { apiUrl: api.url, queuePrefix: prefix });
    operatorToken = await api.createToken('OPERATOR', { name: 'sre-operator' });
    viewerToken = await api.createToken('VIEWER', { name: 'sre-viewer' });
    browser = await launchChromium();
    // The registration order (generation 1) reported back: the cluster starts in sync.
    await eventually(async () => ((await clusterState()).inSync ? true : undefined), {
      timeoutMs: 30_000,
      what: 'prod-east in sync at generation 1',
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output()}`);
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

  it('signs in with an API token and shows the fleet overview', async () => {
    const page = await newPage();
    await page.goto(api.url);
    await page.getByRole('heading', { name: 'Sign in to Karpenter Fleet' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, '01-sign-in');

    await page.getByLabel('API token').fill('not-a-token-at-all-0000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await textMatches(page.locator('.pf-v6-c-helper-text'), /valid, unexpired API token/);

    await page.getByLabel('API token').fill(operatorToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    await textMatches(page.getByTestId('count-clusters'), /^2$/);
    await textMatches(page.getByTestId('count-generation-applied'), /^\d$/);
    expect(await page.getByText('sre-operator').count()).toBeGreaterThan(0);
    // The token is kept for the tab only.
    expect(await page.evaluate<string[]>('Object.values(sessionStorage)')).toContain(operatorToken);
    expect(await page.evaluate<string[]>('Object.values(localStorage)')).not.toContain(
      operatorToken,
    );
    await expectAccessible(page);
    await screenshot(page, '02-overview');
  });

  it('filters the clusters table by a label selector, server-side, kept in the URL', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    await page.getByRole('link', { name: 'Clusters' }).first().click();
    await page.getByTestId('cluster-row-staging-west').waitFor();
    await textMatches(page.getByTestId('cluster-total'), /^2 clusters$/);
    await expectAccessible(page);
    await screenshot(page, '03-clusters');

    await page.getByLabel('Label selector').fill('env in (prod),tier=gold');
    await page.getByRole('button', { name: 'Filter' }).click();
    await textMatches(page.getByTestId('cluster-total'), /^1 cluster$/);
    await page.getByTestId('cluster-row-prod-east').waitFor();
    expect(await page.getByTestId('cluster-row-staging-west').count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('selector')).toBe('env in (prod),tier=gold');

    // Saved in the URL: a reload (or a shared link) shows the same filtered table.
    await page.reload();
    await textMatches(page.getByTestId('cluster-total'), /^1 cluster$/);
    expect(await page.getByLabel('Label selector').inputValue()).toBe('env in (prod),tier=gold');

    // A selector the API refuses shows the API's own message.
    await page.getByLabel('Label selector').fill('env in prod');
    await page.getByRole('button', { name: 'Filter' }).click();
    await textMatches(
      page.getByText(/Clusters could not be loaded/).locator('..'),
      /labelSelector/,
    );
    await screenshot(page, '04-clusters-filtered');
  });

  it('sends the clusters page its query beside the token check on load, and only once', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    const events: string[] = [];
    const operation = (body: string | null) => /\b(?:query|mutation)\s+(\w+)/.exec(body ?? '')?.[1];
    page.on('request', (req) => {
      const op = operation(req.postData());
      if (op) events.push(`sent ${op}`);
    });
    page.on('response', (res) => {
      const op = operation(res.request().postData());
      if (op) events.push(`answered ${op}`);
    });
    // A page opened from a link (or reloaded): its filter and sort come from the URL.
    await page.goto(`${api.url}/clusters?selector=env%3Dprod&sort=CREATED_AT&dir=desc`);
    await page.getByTestId('cluster-row-prod-east').waitFor();
    await textMatches(page.getByTestId('cluster-total'), /^1 cluster$/);
    expect(events).toContain('answered Viewer');
    // Not one round trip behind the token check; and the page took that answer, not asking again.
    expect(events.indexOf('sent Clusters')).toBeLessThan(events.indexOf('answered Viewer'));
    expect(events.filter((e) => e === 'sent Clusters')).toHaveLength(1);
  });

  it('enables Karpenter with the Cluster Autoscaler disabled, confirmed, and sees it go in sync live', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    await page.goto(clusterUrl());
    await page.getByRole('heading', { name: 'prod-east' }).waitFor();
    await textMatches(page.getByTestId('cluster-state'), /^Healthy$/);
    await expectAccessible(page);
    await screenshot(page, '05-cluster');
    const before = await clusterState();
    // Marks this document: if the page reloaded, the mark would be gone.
    await page.evaluate('window.noReload = true');

    // A second tab on the clusters table: its row must follow too.
    const list = await newPage();
    await signIn(list, operatorToken);
    await list.goto(`${api.url}/clusters`);
    const row = list.getByTestId('cluster-row-prod-east');
    await textMatches(row, /Disabled/);
    await list.evaluate('window.noReload = true');

    await page.getByRole('button', { name: 'Configure Karpenter' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Enabled', { exact: true }).click();
    await dialog.getByLabel('Disable').check();
    await dialog.getByRole('button', { name: 'Review' }).click();
    const steps = await textMatches(
      dialog.getByTestId('karpenter-change-steps'),
      /Installs Karpenter on prod-east/,
    );
    expect(steps).toMatch(
      /Disables the Cluster Autoscaler once Karpenter can take over \(its operand Available and EC2NodeClass default Ready.*\): saves an exact copy of ClusterAutoscaler\/default and its 3 MachineAutoscalers/,
    );
    expect(await clusterState()).toEqual(before); // nothing is sent before the confirmation
    await expectAccessible(page);
    await screenshot(page, '06-karpenter-confirmation');
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await dialog.waitFor({ state: 'detached' });

    await textMatches(page.getByTestId('karpenter-enabled'), /^Enabled$/);
    await textMatches(page.getByTestId('cas-mode'), /^DISABLE/);
    const generation = Number(await page.getByTestId('generation').textContent());
    expect(generation).toBe(before.karpenter.generation + 1);
    // The sidecar applies it and reports; the page follows through the subscription alone.
    await textMatches(
      page.getByTestId('observed-generation'),
      new RegExp(`^${generation}$`),
      45_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output()}`);
    });
    await textMatches(page.getByTestId('cluster-state'), /^Healthy$/, 15_000);
    // The Cluster Autoscaler stays until Karpenter can take over (never without an autoscaler).
    await textMatches(page.getByTestId('cas-mode'), /observed: Present/, 15_000);
    expect(
      cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default'),
    ).toBeDefined();
    // Karpenter comes up: its Deployment Available, its NodeClass Ready (as its service account).
    cluster.kube.setDeploymentAvailable('openshift-karpenter', 'karpenter');
    const karpenter = new NodeLaunchSimulator({ kube: cluster.kube, ec2: cluster.ec2 });
    karpenter.markNodeClassReady('default');
    await textMatches(page.getByTestId('cas-mode'), /observed: Removed/, 30_000);
    expect(await page.evaluate<boolean | undefined>('window.noReload')).toBe(true);
    expect(
      cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default'),
    ).toBeUndefined();
    await textMatches(row, new RegExp(`Healthy.*Enabled.*DISABLE.*${generation} of ${generation}`));
    expect(await list.evaluate<boolean | undefined>('window.noReload')).toBe(true);
    await screenshot(page, '07-cluster-in-sync');
  });

  it("shows each NodeClass's MachineConfigPool, live, and a Degraded one", async () => {
    const page = await newPage();
    await signIn(page, viewerToken);
    await page.goto(clusterUrl());
    await page.getByRole('heading', { name: 'Karpenter MachineConfigPools' }).waitFor();
    const cells = (row: string) =>
      page
        .getByTestId(row)
        .locator('td')
        .allTextContents()
        .then((t) => t.join(' | '));
    await textMatches(
      page.getByTestId('pool-karpenter-default'),
      /rendered-karpenter-default-/,
      30_000,
    );
    expect(await cells('pool-karpenter-default')).toMatch(
      /^default \| karpenter-default \| 0 \| 0 \| 0 \| 0 \| rendered-karpenter-default-\S+ \| Updated: All nodes are updated with MachineConfig rendered-karpenter-default-\S+$/,
    );
    await page.evaluate('window.noReload = true');

    // A cluster admin's own NodeClass gets its pool, and a row, without a reload.
    const infra = fixtureInfrastructure();
    cluster.kube.create(
      {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'gpu' },
        spec: {
          amiFamily: 'Custom',
          amiSelectorTerms: [{ id: infra.worker.amiID }],
          role: 'gpu-role',
          subnetSelectorTerms: [{ id: 'subnet-0aa11111111111111' }],
          securityGroupSelectorTerms: [{ id: 'sg-0n0de000000000001' }],
          userData: infra.userData,
        },
      },
      { fieldManager: 'kubectl-create' },
    );
    await textMatches(page.getByTestId('pool-karpenter-gpu'), /^gpu\s*karpenter-gpu/, 30_000);

    // A node of the default NodeClass whose machine-config daemon failed: its pool is Degraded.
    const node = 'ip-10-0-1-77.ec2.internal';
    cluster.kube.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: node,
        labels: {
          'karpenter.k8s.aws/ec2nodeclass': 'default',
          'node-role.kubernetes.io/worker': '',
        },
        annotations: {
          'machineconfiguration.openshift.io/state': 'Degraded',
          'machineconfiguration.openshift.io/reason': 'unexpected on-disk state',
        },
      },
    });
    const degraded = await textMatches(
      page.getByTestId('pool-karpenter-default'),
      /Degraded/,
      30_000,
    );
    expect(await cells('pool-karpenter-default')).toMatch(
      /^default \| karpenter-default \| 1 \| 0 \| 0 \| 1 \| rendered-karpenter-default-\S+ \| .*Degraded/,
    );
    expect(degraded).toContain('Degraded');
    await textMatches(
      page.getByTestId('condition-KarpenterPoolsDegraded'),
      /KarpenterPoolsDegraded\s*True\s*MachineConfigPoolDegraded.*karpenter-default/,
      30_000,
    );
    expect(await page.evaluate<boolean | undefined>('window.noReload')).toBe(true);
    await expectAccessible(page);
    // Long rendered-configuration names and MCO messages wrap inside the card, never past it.
    const overflow = await page.evaluate(`(() => {
      const table = document.querySelector('table[aria-label="Karpenter MachineConfigPools"]');
      const card = table.closest('.pf-v6-c-card').getBoundingClientRect();
      const t = table.getBoundingClientRect();
      return Math.max(0, Math.round(t.right - card.right), Math.round(card.left - t.left));
    })()`);
    expect(overflow).toBe(0);
    await page.getByTestId('pool-karpenter-default').scrollIntoViewIfNeeded();
    await screenshot(page, '07b-machine-config-pools-degraded');

    // Put back as it was for the tests that follow.
    cluster.kube.delete('v1', 'Node', node);
    cluster.kube.delete('karpenter.k8s.aws/v1', 'EC2NodeClass', 'gpu');
    await textMatches(
      page.getByTestId('condition-KarpenterPoolsDegraded'),
      /KarpenterPoolsDegraded\s*False/,
      30_000,
    );
  });

  it('shows an invalid NodePool refused at the offending field, with nothing saved', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    await page.goto(clusterUrl());
    await page.getByRole('button', { name: 'Add NodePool' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('general');
    const spec = [
      'template:',
      '  spec:',
      '    nodeClassRef:',
      '      group: karpenter.k8s.aws',
      '      kind: EC2NodeClass',
      '      name: default',
      '    requirements:',
      '      - key: kubernetes.io/arch',
      '        operator: Equals',
      '        values: [amd64]',
      '',
    ].join('\n');
    await dialog.locator('#nodepool-spec').fill(spec);
    const before = await clusterState();
    await dialog.getByRole('button', { name: 'Save' }).click();
    const error = await textMatches(dialog.getByTestId('nodepool-spec-error'), /operator/);
    expect(error).toMatch(/^Line 9: input\.spec\.template\.spec\.requirements\[0\]\.operator: /);
    expect(await dialog.locator('#nodepool-spec').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, '08-nodepool-invalid');
    expect(await clusterState()).toEqual(before);

    // Fixed in place (JSON this time), it saves and the list shows it.
    await dialog.getByRole('button', { name: 'JSON' }).click();
    const json = await dialog.locator('#nodepool-spec').inputValue();
    await dialog.locator('#nodepool-spec').fill(json.replace('"Equals"', '"In"'));
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('nodepool-general').waitFor();
    expect((await clusterState()).nodePools.map((p) => p.name)).toEqual(['general']);
  });

  it('shows a hand edit of a fleet NodePool, put back, with the field and who changed it, live', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    await page.goto(clusterUrl());
    await textMatches(page.getByTestId('drift-policy'), /CORRECT/);
    // An SRE edits the NodePool the fleet manages, through the real client, as kubectl would.
    const sre = ClusterClient.fromKubeconfigFile(cluster.kubeconfigPath);
    // The NodePool the test before saved is on the cluster once the sidecar reports that
    // generation applied, later on a loaded machine (CI).
    await eventually(async () => ((await clusterState()).inSync ? true : undefined), {
      timeoutMs: 30_000,
      what: 'prod-east in sync with the NodePool general',
    });
    await sre.mergePatch(
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'general' },
        spec: {
          template: {
            spec: {
              requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }],
            },
          },
        },
      },
      'kubectl-edit',
    );
    // Seen while being put back, then put back (a time in the last column).
    await textMatches(page.getByTestId('drift-corrected-NodePool-general'), /\d/);
    const text = await page.getByTestId('drift-NodePool-general').innerText();
    expect(text).toContain('.spec.template.spec.requirements by kubectl-edit');
    expect(text).toContain('Modified');
    await screenshot(page, '08b-drift-corrected');
    await expectAccessible(page);

    // Put back, so no cluster is drifted now: the clusters page's filter asks the API for none.
    await page.goto(`${api.url}/clusters`);
    await textMatches(page.getByTestId('cluster-total'), /^2 clusters$/);
    await page.getByLabel('Drifted only').check();
    await textMatches(page.getByTestId('cluster-total'), /^0 clusters$/);
    expect(new URL(page.url()).searchParams.get('drifted')).toBe('true');
    await page.getByLabel('Drifted only').uncheck();
    await textMatches(page.getByTestId('cluster-total'), /^2 clusters$/);
  }, 120_000);

  it('shows the API refusal of a change that lost a race (CONFLICT), changing nothing', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    await page.goto(clusterUrl());
    await page.getByRole('button', { name: 'Configure Karpenter' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Migrate').check();
    await dialog.getByRole('button', { name: 'Review' }).click();
    // Someone else changes the cluster while the dialog is open.
    const other = await api.admin(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: debug }) { id } }`,
      { id: prodId },
    );
    expect(other.errors).toBeUndefined();
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await textMatches(dialog.getByText('The API refused the change').locator('..'), /generation/i);
    expect((await clusterState()).karpenter.clusterAutoscalerMode).toBe('DISABLE');
  });

  it('sends the desired state again on Reconcile now, recorded as the operator', async () => {
    const page = await newPage();
    await signIn(page, operatorToken);
    await page.goto(clusterUrl());
    await page.getByRole('button', { name: 'Reconcile now' }).click();
    await textMatches(page.getByText(/sent again/), /^Info alert:Generation \d+ sent again/);
    const audit = await api.admin<{
      cluster: { auditEvents: { nodes: { action: string; actor: string }[] } };
    }>(
      `query($id: ID!) { cluster(id: $id) { auditEvents(first: 50) { nodes { action actor } } } }`,
      {
        id: prodId,
      },
    );
    expect(audit.data?.cluster.auditEvents.nodes).toContainEqual({
      action: 'reconcileCluster',
      actor: 'sre-operator',
    });
  });

  it('offers a VIEWER no control that would be refused', async () => {
    const operator = await newPage();
    await signIn(operator, operatorToken);
    await operator.goto(clusterUrl());
    await operator.getByRole('heading', { name: 'prod-east' }).waitFor();
    await operator.getByTestId('nodepool-general').waitFor();
    // The same page for an operator has them: the check below can fail.
    expect(await operator.locator('[data-mutates]').count()).toBeGreaterThanOrEqual(5);

    const page = await newPage();
    await signIn(page, viewerToken);
    for (const path of ['/', '/clusters', `/clusters/${encodeURIComponent(prodId)}`]) {
      await page.goto(`${api.url}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.locator('.pf-v6-c-skeleton').first().waitFor({ state: 'detached' });
      expect(await page.locator('[data-mutates]').count()).toBe(0);
      for (const name of [
        'Configure Karpenter',
        'Add NodePool',
        'Edit',
        'Pause reconciling',
        'Reconcile now',
      ]) {
        expect(await page.getByRole('button', { name }).count()).toBe(0);
      }
    }
    await page.getByTestId('nodepool-general').waitFor();
    await expectAccessible(page);
    await screenshot(page, '09-cluster-as-viewer');
  });

  it('signs out a session whose token is revoked', async () => {
    const secret = await api.createToken('OPERATOR', { name: 'soon-revoked' });
    const page = await newPage();
    await signIn(page, secret);
    const tokens = await api.admin<{ apiTokens: { id: string; name: string }[] }>(
      `{ apiTokens { id name } }`,
    );
    const id = tokens.data!.apiTokens.find((t) => t.name === 'soon-revoked')!.id;
    const revoked = await api.admin(`mutation($id: ID!) { revokeApiToken(id: $id) { id } }`, {
      id,
    });
    expect(revoked.errors).toBeUndefined();
    // The next request with that token (here, the check a freshly opened page makes) ends the
    // session; whichever request comes first, the tab lands on the sign-in page, told why.
    await page.goto(`${api.url}/clusters`);
    await page.getByRole('heading', { name: 'Sign in to Karpenter Fleet' }).waitFor();
    await textMatches(page.locator('.pf-v6-c-alert'), /no longer accepts this token/);
    expect(await page.evaluate<string[]>('Object.values(sessionStorage)')).not.toContain(secret);
  });
});

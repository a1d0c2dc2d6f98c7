import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  createTestDatabase,
  freePort,
  OidcIssuer,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { launchChromium, screenshot, seriousViolations, textMatches } from './browser.js';

/**
 * "Sign in with <provider>" in a real browser: the console on the API's origin, the API's OIDC
 * login, the emulated issuer (which signs its current user in without a form) and back.
 */
describe('the web console: sign-in through the identity provider', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let issuer: OidcIssuer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(15_000);
    contexts.push(context);
    return context.newPage();
  }

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    db = await createTestDatabase();
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    issuer = await OidcIssuer.start({
      clientId: 'karpenter-fleet',
      redirectUri: `${publicUrl}/auth/oidc/callback`,
    });
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      API_PORT: String(port),
      FLEET_PUBLIC_URL: publicUrl,
      OIDC_ISSUER_URL: issuer.url,
      OIDC_CLIENT_ID: 'karpenter-fleet',
      OIDC_PROVIDER_NAME: 'Keycloak',
      OIDC_GROUP_ROLES: JSON.stringify([{ group: 'sre', role: 'VIEWER' }]),
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await api?.app.close();
    await issuer?.stop();
    await db?.drop();
  }, 30_000);

  it('signs in with the provider, keeping no secret in the address bar, and signs out', async () => {
    issuer.user = { sub: 'u-1', preferred_username: 'alice', groups: ['sre'] };
    const page = await newPage();
    await page.goto(api.url);
    const button = page.getByRole('link', { name: 'Sign in with Keycloak' });
    await button.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'oidc-01-sign-in');
    await button.click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    await textMatches(page.locator('header'), /oidc:alice\s*VIEWER/);
    expect(page.url()).toBe(`${api.url}/`);
    await screenshot(page, 'oidc-02-signed-in');

    // Signing out ends the session on the API, not only in this tab.
    const secret = await page.evaluate<string | null>(
      "sessionStorage.getItem('karpenter-fleet.token')",
    );
    expect((await api.as(secret!)(`{ viewer { name } }`)).errors).toBeUndefined();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with Keycloak' }).waitFor();
    expect((await api.as(secret!)(`{ viewer { name } }`)).errors?.[0]?.extensions?.code).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('shows why the provider’s sign-in was refused', async () => {
    issuer.user = { sub: 'u-2', preferred_username: 'mallory', groups: ['interns'] };
    const page = await newPage();
    await page.goto(api.url);
    await page.getByRole('link', { name: 'Sign in with Keycloak' }).click();
    await textMatches(
      page.getByText(/is in no group/),
      /^mallory is in no group that is given a role on this fleet \(the "groups" claim lists "interns"\)$/,
    );
    expect(page.url()).toBe(`${api.url}/`);
    await screenshot(page, 'oidc-03-refused');
  });
});

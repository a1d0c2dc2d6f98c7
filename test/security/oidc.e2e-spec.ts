import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  freePort,
  OidcIssuer,
  subscriptionClient,
  testQueuePrefix,
  type OidcUser,
  type TestDatabase,
} from '@fleet/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run as kfleet, type Io } from '../../apps/cli/src/program.js';
import { startApi, type RunningApi } from '../api/start-api.js';

const CLIENT_ID = 'karpenter-fleet';
const CLIENT_SECRET = 'fleet-client-secret-for-tests';
const GROUP_ROLES = [
  { group: 'fleet-admins', role: 'ADMIN' },
  { group: 'team-a-operators', role: 'OPERATOR', labelSelector: 'team=a' },
  { group: 'fleet-viewers', role: 'VIEWER' },
];

interface Outcome {
  secret?: string;
  error?: string;
}

/** Where a sign-in ends: the console's URL with the session or the error in its fragment. */
function outcomeOf(location: string | null): Outcome {
  const match = /^\/#(session|oidc-error)=(.*)$/.exec(location ?? '');
  if (!match) throw new Error(`expected a redirect to the console, got ${String(location)}`);
  const value = decodeURIComponent(match[2]!);
  return match[1] === 'session' ? { secret: value } : { error: value };
}

/** A browser's sign-in, step by step over HTTP: the API, the issuer, back to the API. */
class BrowserLogin {
  cookie = '';
  authorizationUrl = '';
  constructor(private readonly apiUrl: string) {}

  /** GET /auth/oidc/login: the state cookie and the issuer's authorization URL. */
  async start(): Promise<Outcome | undefined> {
    const res = await fetch(`${this.apiUrl}/auth/oidc/login`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    if (location.startsWith('/#')) return outcomeOf(location);
    this.cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(this.cookie).toMatch(/^kfleet_oidc_login=.+/);
    this.authorizationUrl = location;
    return undefined;
  }

  /** The issuer signs its current user in and sends the browser back with a code. */
  async authorize(): Promise<string> {
    const res = await fetch(this.authorizationUrl, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return res.headers.get('location')!;
  }

  async callback(url: string, cookie = this.cookie): Promise<Outcome> {
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    expect(res.status).toBe(302);
    return outcomeOf(res.headers.get('location'));
  }

  async run(): Promise<Outcome> {
    return (await this.start()) ?? this.callback(await this.authorize());
  }
}

/** Issue 17, point 14: people sign in with their identity provider. */
describe('security: OIDC sign-in', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let issuer: OidcIssuer;
  const login = () => new BrowserLogin(api.url);
  const signInAs = async (user: OidcUser): Promise<Outcome> => {
    issuer.user = user;
    return login().run();
  };
  const sessionsOf = async (name: string) => {
    const res = await api.admin<{ apiTokens: { name: string; role: string }[] }>(
      `{ apiTokens { name role } }`,
    );
    return res.data!.apiTokens.filter((t) => t.name === name);
  };
  const viewerOf = (secret: string) =>
    api.as(secret)<{
      viewer: { name: string; role: string; labelSelector: string | null; expiresAt: string };
    }>(`{ viewer { name role labelSelector expiresAt } }`);

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    issuer = await OidcIssuer.start({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: `${publicUrl}/auth/oidc/callback`,
    });
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      API_PORT: String(port),
      FLEET_PUBLIC_URL: publicUrl,
      OIDC_ISSUER_URL: issuer.url,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_PROVIDER_NAME: 'Keycloak',
      OIDC_SCOPES: 'openid profile groups',
      OIDC_GROUP_ROLES: JSON.stringify(GROUP_ROLES),
      OIDC_JWKS_COOLDOWN_SECONDS: '1',
      // Refusals here are deliberate and many; the per-address bound has its own suite.
      UNAUTHENTICATED_PER_WINDOW: '1000',
    });
  });

  afterAll(async () => {
    await api?.app.close();
    await issuer?.stop();
    await db?.drop();
  });

  it('tells the console which provider to offer', async () => {
    const res = await fetch(`${api.url}/auth/oidc`);
    expect(await res.json()).toEqual({
      enabled: true,
      providerName: 'Keycloak',
      loginPath: '/auth/oidc/login',
    });
  });

  it('signs a person in: code with PKCE, ID token verified, a session bound to its expiry', async () => {
    const before = Date.now();
    const outcome = await signInAs({
      sub: 'u-1',
      preferred_username: 'alice',
      groups: ['fleet-admins'],
    });
    expect(outcome.error).toBeUndefined();
    const viewer = await viewerOf(outcome.secret!);
    expect(viewer.errors).toBeUndefined();
    expect(viewer.data!.viewer).toMatchObject({
      name: 'oidc:alice',
      role: 'ADMIN',
      labelSelector: null,
    });
    // The ID token lives 300 s; the session ends exactly then (to the second of its `exp`).
    const expiresAt = Date.parse(viewer.data!.viewer.expiresAt);
    expect(expiresAt).toBeGreaterThan(before + 298_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);
    expect(issuer.requests).toEqual(
      expect.arrayContaining([
        'GET /realms/fleet/.well-known/openid-configuration',
        'GET /realms/fleet/protocol/openid-connect/certs',
        'GET /realms/fleet/protocol/openid-connect/auth',
        'POST /realms/fleet/protocol/openid-connect/token',
      ]),
    );
    // The session can do what an ADMIN token does; API tokens keep working beside it.
    const tokens = await api.as(outcome.secret)<{ apiTokens: unknown[] }>(`{ apiTokens { id } }`);
    expect(tokens.errors).toBeUndefined();
    expect((await api.admin(`{ viewer { name } }`)).errors).toBeUndefined();
  });

  it('counts sign-ins by outcome in /metrics', async () => {
    const count = async (outcome: string) => {
      const text = await (await fetch(`${api.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('fleet_api_oidc_sign_ins_total{') && l.includes(`outcome="${outcome}"`),
        );
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    const [sessions, refusals] = [await count('session'), await count('refused')];
    await signInAs({ sub: 'u-12', preferred_username: 'kim', groups: ['fleet-viewers'] });
    await signInAs({ sub: 'u-13', preferred_username: 'leo', groups: [] });
    issuer.spoilNextIdToken({ audience: 'someone-else' });
    await signInAs({ sub: 'u-12', preferred_username: 'kim', groups: ['fleet-viewers'] });
    expect([(await count('session')) - sessions, (await count('refused')) - refusals]).toEqual([
      1, 2,
    ]);
  });

  it('maps groups to roles and scopes; a person in no mapped group gets nothing', async () => {
    for (const [name, team] of [
      ['oidc-a', 'a'],
      ['oidc-b', 'b'],
    ] as const) {
      const res = await api.admin(
        `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } } }`,
        {
          input: {
            name,
            topology: 'STANDALONE',
            platform: 'AWS',
            region: 'eu-west-1',
            labels: { team },
          },
        },
      );
      expect(res.errors).toBeUndefined();
    }
    // The first rule the person's groups match decides: team-a-operators before fleet-viewers.
    const bob = await signInAs({
      sub: 'u-2',
      preferred_username: 'bob',
      groups: ['unrelated', 'fleet-viewers', 'team-a-operators'],
    });
    const viewer = await viewerOf(bob.secret!);
    expect(viewer.data!.viewer).toMatchObject({
      name: 'oidc:bob',
      role: 'OPERATOR',
      labelSelector: 'team=a',
    });
    const seen = await api.as(bob.secret)<{ clusters: { nodes: { name: string }[] } }>(
      `{ clusters(first: 10) { nodes { name } } }`,
    );
    expect(seen.data!.clusters.nodes.map((c) => c.name)).toEqual(['oidc-a']);

    const carol = await signInAs({ sub: 'u-3', preferred_username: 'carol', groups: ['interns'] });
    expect(carol).toEqual({
      error:
        'carol is in no group that is given a role on this fleet (the "groups" claim lists "interns")',
    });
    expect(await sessionsOf('oidc:carol')).toEqual([]);
  });

  it.each([
    [
      'an expired ID token',
      { expiresInSeconds: -60 },
      /^the ID token is refused: it expired \(exp \d+, now \d+\)$/,
    ],
    [
      'a wrongly signed ID token',
      { signWithUnpublishedKey: true },
      /^the ID token is refused: its signature does not verify with the provider's published key$/,
    ],
    [
      'an ID token for another client',
      { audience: 'someone-else' },
      /^the ID token is refused: its audience "someone-else" is not this fleet's client \(OIDC_CLIENT_ID\)$/,
    ],
    [
      'an ID token from another issuer',
      { issuer: 'https://evil.example.com/realms/fleet' },
      /^the ID token is refused: its issuer "https:\/\/evil.example.com\/realms\/fleet" is not the configured OIDC_ISSUER_URL$/,
    ],
    [
      'an ID token with another sign-in’s nonce',
      { nonce: 'replayed-nonce' },
      /^the ID token is refused: its nonce is not the one this sign-in sent/,
    ],
  ])('refuses %s and opens no session', async (_what, fault, message) => {
    issuer.spoilNextIdToken(fault);
    const outcome = await signInAs({
      sub: 'u-4',
      preferred_username: 'mallory',
      groups: ['fleet-admins'],
    });
    expect(outcome.secret).toBeUndefined();
    expect(outcome.error).toMatch(message);
    expect(await sessionsOf('oidc:mallory')).toEqual([]);
  });

  it('refuses a replayed code, a code without its PKCE verifier, a foreign or stale sign-in', async () => {
    issuer.user = { sub: 'u-5', preferred_username: 'dave', groups: ['fleet-viewers'] };
    const first = login();
    await first.start();
    const callbackUrl = await first.authorize();
    expect((await first.callback(callbackUrl)).secret).toBeDefined();

    // The same callback again, from the same browser: the issuer honours a code once.
    expect(await first.callback(callbackUrl)).toEqual({
      error: 'the identity provider refused the code: invalid_grant (code already used)',
    });

    // The used code under a fresh sign-in's state: the issuer honours a code once.
    const second = login();
    await second.start();
    const state = new URL(second.authorizationUrl).searchParams.get('state')!;
    const code = new URL(callbackUrl).searchParams.get('code')!;
    const replay = new URL(`${api.url}/auth/oidc/callback`);
    replay.search = new URLSearchParams({ code, state }).toString();
    expect(await second.callback(replay.toString())).toEqual({
      error: 'the identity provider refused the code: invalid_grant (code already used)',
    });

    // An unused code injected into another browser's sign-in: its PKCE verifier does not match.
    const victim = login();
    await victim.start();
    const attacker = login();
    await attacker.start();
    const attackerCode = new URL(await attacker.authorize()).searchParams.get('code')!;
    const injected = new URL(`${api.url}/auth/oidc/callback`);
    injected.search = new URLSearchParams({
      code: attackerCode,
      state: new URL(victim.authorizationUrl).searchParams.get('state')!,
    }).toString();
    expect(await victim.callback(injected.toString())).toEqual({
      error:
        'the identity provider refused the code: invalid_grant (code_verifier does not match the code_challenge)',
    });

    // A callback without the cookie of the browser that started it.
    const third = login();
    await third.start();
    expect(await third.callback(await third.authorize(), '')).toEqual({
      error:
        'this sign-in was not started by this browser (state does not match its cookie); sign in again',
    });

    // A sign-in left waiting longer than 10 minutes.
    const stale = login();
    await stale.start();
    const [name, value] = stale.cookie.split('=') as [string, string];
    const pending = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as {
      startedAt: number;
    };
    pending.startedAt -= 11 * 60_000;
    const staleCookie = `${name}=${Buffer.from(JSON.stringify(pending)).toString('base64url')}`;
    expect(await stale.callback(await stale.authorize(), staleCookie)).toEqual({
      error: 'this sign-in is older than 10 minutes; sign in again',
    });
    expect(await sessionsOf('oidc:dave')).toHaveLength(1);
  });

  it('picks up the issuer’s new signing key after a rotation', async () => {
    const certsBefore = issuer.requests.filter((r) => r.endsWith('/certs')).length;
    await new Promise((r) => setTimeout(r, 1_100)); // past the 1 s JWKS cooldown of this API
    await issuer.rotateKeys({ keepPrevious: false });
    const outcome = await signInAs({
      sub: 'u-6',
      preferred_username: 'erin',
      groups: ['fleet-viewers'],
    });
    expect(outcome.error).toBeUndefined();
    expect((await viewerOf(outcome.secret!)).data!.viewer.name).toBe('oidc:erin');
    expect(issuer.requests.filter((r) => r.endsWith('/certs')).length).toBe(certsBefore + 1);
  });

  it('bounds a session by OIDC_MAX_SESSION_HOURS when the ID token lives longer', async () => {
    issuer.spoilNextIdToken({ expiresInSeconds: 48 * 3600 });
    const outcome = await signInAs({
      sub: 'u-8',
      preferred_username: 'gina',
      groups: ['fleet-viewers'],
    });
    const expiresAt = Date.parse((await viewerOf(outcome.secret!)).data!.viewer.expiresAt);
    expect(Math.abs(expiresAt - (Date.now() + 12 * 3_600_000))).toBeLessThan(60_000);
  });

  it('ends a session at sign-out, and leaves API tokens alone', async () => {
    const outcome = await signInAs({
      sub: 'u-9',
      preferred_username: 'hugo',
      groups: ['fleet-viewers'],
    });
    const session = api.as(outcome.secret);
    expect(
      (await session<{ viewer: { session: boolean } }>(`{ viewer { session } }`)).data,
    ).toEqual({
      viewer: { session: true },
    });
    expect((await session(`mutation { signOut }`)).data).toEqual({ signOut: true });
    expect((await viewerOf(outcome.secret!)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const token = await api.createToken('VIEWER', { name: 'automation' });
    expect((await api.as(token)(`mutation { signOut }`)).data).toEqual({ signOut: false });
    expect(
      (await api.as(token)<{ viewer: { session: boolean } }>(`{ viewer { session } }`)).data,
    ).toEqual({
      viewer: { session: false },
    });
  });

  it('ends the session when the provider’s ID token expires', async () => {
    issuer.spoilNextIdToken({ expiresInSeconds: 3 });
    const outcome = await signInAs({
      sub: 'u-7',
      preferred_username: 'frank',
      groups: ['fleet-viewers'],
    });
    const viewer = await viewerOf(outcome.secret!);
    expect(viewer.errors).toBeUndefined();
    const expiresAt = Date.parse(viewer.data!.viewer.expiresAt);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(3_000);
    // A dashboard's socket opened with the session is closed when it ends, like a token's.
    const socket = subscriptionClient(api.url, outcome.secret);
    let closed: number | undefined;
    let connected = false;
    socket.on('connected', () => (connected = true));
    socket.on('closed', (event) => (closed = (event as { code: number }).code));
    const stop = socket.subscribe(
      { query: `subscription { fleetSummaryChanged { clusters } }` },
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    await eventually(() => connected || undefined, { timeoutMs: 5_000, what: 'the socket' });
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 100));
    const after = await viewerOf(outcome.secret!);
    expect(after.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await eventually(() => closed, { timeoutMs: 5_000, what: 'the socket to close' })).toBe(
      4401,
    );
    stop();
    await socket.dispose();
  });

  it('kfleet login --oidc: the session reaches the CLI on its loopback listener', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kfleet-oidc-'));
    let stderr = '';
    let stdout = '';
    const io: Io = {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      env: { KFLEET_CONFIG: join(dir, 'config') },
      readFile: (path) => readFile(path, 'utf8'),
      writeFile: (path, data) => writeFile(path, data, { mode: 0o600 }),
      now: () => new Date(),
    };
    const loginAs = async (user: OidcUser) => {
      issuer.user = user;
      stderr = stdout = '';
      const exit = kfleet(['node', 'kfleet', 'login', api.url, '--oidc', '--context', 'sso'], io);
      const url = await eventually(() => /^ {2}(http\S+)$/m.exec(stderr)?.[1], {
        timeoutMs: 5_000,
        what: 'the sign-in URL kfleet prints',
      });
      // The browser: the API, the issuer, the API's callback, then kfleet's loopback listener.
      const browser = new BrowserLogin(api.url);
      browser.authorizationUrl = url;
      const start = await fetch(url, { redirect: 'manual' });
      browser.cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
      browser.authorizationUrl = start.headers.get('location')!;
      const back = await fetch(await browser.authorize(), {
        redirect: 'manual',
        headers: { cookie: browser.cookie },
      });
      const loopback = new URL(back.headers.get('location')!);
      expect(loopback.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Anything else knocking on the listener (without kfleet's state) is turned away.
      const stray = new URL(loopback);
      stray.searchParams.set('cli_state', 'not-the-one-kfleet-chose');
      expect((await fetch(stray)).status).toBe(400);
      const page = await fetch(loopback);
      return { code: await exit, page: await page.text() };
    };
    try {
      const ok = await loginAs({
        sub: 'u-10',
        preferred_username: 'ivan',
        groups: ['fleet-admins'],
      });
      expect(ok).toEqual({
        code: 0,
        page: 'Signed in: kfleet has your session. You can close this tab.\n',
      });
      expect(stdout).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ as oidc:ivan \(ADMIN\)\./);
      expect(await kfleet(['node', 'kfleet', 'whoami', '-o', 'name'], io)).toBe(0);
      expect(stdout).toContain('token/oidc:ivan');

      const refused = await loginAs({ sub: 'u-11', preferred_username: 'judy', groups: [] });
      expect(refused.code).toBe(4);
      expect(stderr).toContain(
        'sign-in refused: judy is in no group that is given a role on this fleet',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Only a loopback listener may be handed a session.
    const elsewhere = new URL(`${api.url}/auth/oidc/login`);
    elsewhere.search = new URLSearchParams({
      cli_callback: 'https://attacker.example.com/callback',
      cli_state: 'a'.repeat(24),
    }).toString();
    expect(await new BrowserLogin(api.url).callback(elsewhere.toString())).toEqual({
      error:
        'cli_callback: must be an http:// URL on 127.0.0.1 or [::1] with a port (kfleet login --oidc sets it)',
    });
  });

  it('refuses an issuer that does not offer PKCE, before sending anyone to it', async () => {
    const port = await freePort();
    const noPkce = await OidcIssuer.start({
      clientId: CLIENT_ID,
      redirectUri: `http://127.0.0.1:${port}/auth/oidc/callback`,
      advertisePkce: false,
    });
    const other = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      API_PORT: String(port),
      FLEET_PUBLIC_URL: `http://127.0.0.1:${port}`,
      OIDC_ISSUER_URL: noPkce.url,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_GROUP_ROLES: JSON.stringify(GROUP_ROLES),
    });
    try {
      expect(await new BrowserLogin(other.url).start()).toEqual({
        error:
          'the identity provider does not offer PKCE with S256 (code_challenge_methods_supported); the fleet signs in only with PKCE',
      });
      expect(noPkce.requests).toEqual(['GET /realms/fleet/.well-known/openid-configuration']);
    } finally {
      await other.app.close();
      await noPkce.stop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startApi, type RunningApi } from '../api/start-api.js';

const INTROSPECTION = `{ __schema { queryType { name } } }`;

/** Issue 17, point 13: production defaults of the API (introspection, the bootstrap token). */
describe('security: production defaults', () => {
  let db: TestDatabase;
  const apis: RunningApi[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix(), ...env });
    apis.push(api);
    return api;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const api of apis) await api.app.close();
    await db?.drop();
  });

  it('answers introspection only outside production, unless GRAPHQL_INTROSPECTION says otherwise', async () => {
    const production = await start({ NODE_ENV: 'production' });
    const refused = await production.admin(INTROSPECTION);
    expect(refused.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect((await production.admin(`{ viewer { name } }`)).errors).toBeUndefined();

    const optedIn = await start({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' });
    expect((await optedIn.admin(INTROSPECTION)).errors).toBeUndefined();

    const development = await start();
    expect((await development.admin(INTROSPECTION)).errors).toBeUndefined();
  });

  it('creates the bootstrap admin token with an expiry, FLEET_BOOTSTRAP_TOKEN_TTL_HOURS after creation', async () => {
    const before = Date.now();
    const api = await start({ FLEET_BOOTSTRAP_TOKEN_TTL_HOURS: '2' });
    const after = Date.now();
    const res = await api.admin<{ viewer: { name: string; expiresAt: string | null } }>(
      `{ viewer { name expiresAt } }`,
    );
    expect(res.data?.viewer.name).toBe('bootstrap-admin');
    const expiresAt = Date.parse(res.data!.viewer.expiresAt!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 2 * 3_600_000 - 1_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 2 * 3_600_000 + 1_000);
  });
});

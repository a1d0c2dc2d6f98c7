import { randomBytes } from 'node:crypto';
import { graphqlClient } from '../support/graphql-client.js';
import { eventually, freePort, startProcess, type RunningProcess } from '../support/processes.js';

export interface ApiProcess {
  url: string;
  process: RunningProcess;
  /** GraphQL as someone holding `secret`. */
  as(secret: string): ReturnType<typeof graphqlClient>;
  /** Creates a token through the API (as the bootstrap admin) and returns its secret. */
  createToken(role: 'VIEWER' | 'OPERATOR' | 'ADMIN', name?: string): Promise<string>;
  stop(): Promise<void>;
}

/** Resolves once the API at `url` answers `/readyz` (a minute at most). */
export async function apiReady(url: string): Promise<void> {
  await eventually(
    () =>
      fetch(`${url}/readyz`)
        .then((r) => (r.ok ? true : undefined))
        .catch(() => undefined),
    { timeoutMs: 60_000, what: 'the API process' },
  );
}

/**
 * The API as deployed, for a benchmark: its own process (`dist/apps/api/src/main.js`) with
 * NODE_ENV=production, which libraries read (graphql-js checks every `instanceOf` across realms
 * in development, a few percent of a page's CPU), a bootstrap admin, and a rate limit no
 * benchmark reaches. Ready once `/readyz` answers.
 */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const api = startProcess(
    'dist/apps/api/src/main.js',
    {
      NODE_ENV: 'production',
      RATE_LIMIT_PER_MINUTE: '100000000',
      ...env,
      API_PORT: String(port),
      FLEET_BOOTSTRAP_TOKEN: adminToken,
    },
    'api',
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await apiReady(url);
  } catch (err) {
    await api.stop();
    throw new Error(`${(err as Error).message}\n${api.output()}`, { cause: err });
  }
  const as = (secret: string) =>
    graphqlClient(`${url}/graphql`, { authorization: `Bearer ${secret}` });
  let tokens = 0;
  return {
    url,
    process: api,
    as,
    async createToken(role, name = `bench-${role.toLowerCase()}-${++tokens}`) {
      const res = await as(adminToken)<{ createApiToken: { secret: string } }>(
        `mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { secret } }`,
        { input: { name, role } },
      );
      if (!res.data) throw new Error(`createApiToken refused: ${JSON.stringify(res.errors)}`);
      return res.data.createApiToken.secret;
    },
    stop: () => api.stop(),
  };
}

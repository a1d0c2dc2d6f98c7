import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  eventually,
  freePort,
  graphqlClient,
  startProcess,
  type RunningProcess,
} from '@fleet/testing';

/**
 * Shared by the property-based suites (issue 17): the built API as its own process, so its health
 * and memory are the process's own; a fingerprint of the whole database, to prove a refused input
 * wrote nothing; and fast-check parameters that make every failure reproducible.
 *
 * FLEET_FUZZ_SEED (default 1717), FLEET_FUZZ_RUNS (runs per property; each suite has a default
 * that keeps it well under a minute) and FLEET_FUZZ_PATH (the path fast-check prints with a
 * failure) replay or widen a run, FLEET_FUZZ_SHRINK=1 shrinks a failure:
 * `FLEET_FUZZ_RUNS=2000 FLEET_FUZZ_SEED=7 node … jest.js --testPathPatterns fuzz- --testTimeout 0`.
 */
export const FUZZ_SEED = Number(process.env.FLEET_FUZZ_SEED ?? 1717);

export function fuzzParameters<T>(defaultRuns: number, what: string): fc.Parameters<T> {
  const numRuns = Number(process.env.FLEET_FUZZ_RUNS ?? defaultRuns);
  const path = process.env.FLEET_FUZZ_PATH;
  // Printed up front as well: a suite stopped by Jest's timeout never reaches fast-check's report.
  process.stdout.write(
    `fuzz ${what}: seed ${FUZZ_SEED}, ${numRuns} runs${path ? `, path ${path}` : ''}\n`,
  );
  return {
    seed: FUZZ_SEED,
    numRuns,
    ...(path ? { path } : {}),
    // Shrinking an end-to-end counterexample takes minutes: by default the first failure is
    // reported with its seed and path at once; FLEET_FUZZ_SHRINK=1 with them shrinks it.
    endOnFailure: process.env.FLEET_FUZZ_SHRINK !== '1',
    verbose: fc.VerbosityLevel.Verbose,
  };
}

export interface FuzzedApi {
  url: string;
  adminToken: string;
  admin: ReturnType<typeof graphqlClient>;
  process: RunningProcess;
  /** Resident memory of the API process, from /proc. */
  rssBytes(): number;
  /** /healthz answers 200 within 2 s. */
  healthy(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Starts the built API (dist/) as production runs it, with a bootstrap admin. */
export async function startFuzzedApi(env: Record<string, string>): Promise<FuzzedApi> {
  const port = await freePort();
  const adminToken = `bootstrap-${randomBytes(16).toString('hex')}`;
  const proc = startProcess(
    'dist/apps/api/src/main.js',
    {
      API_PORT: String(port),
      NODE_ENV: 'production',
      FLEET_BOOTSTRAP_TOKEN: adminToken,
      LOG_LEVEL: 'error',
      ...env,
    },
    'api',
  );
  const url = `http://127.0.0.1:${port}`;
  const ready = eventually(
    () =>
      fetch(`${url}/readyz`)
        .then((r) => (r.ok ? true : undefined))
        .catch(() => undefined),
    { timeoutMs: 45_000, what: 'the API process ready' },
  );
  const exited = proc.exited.then((exit) => {
    throw new Error(`the API exited (${JSON.stringify(exit)}):\n${proc.output()}`);
  });
  await Promise.race([ready, exited]);
  return {
    url,
    adminToken,
    admin: graphqlClient(`${url}/graphql`, { authorization: `Bearer ${adminToken}` }),
    process: proc,
    rssBytes() {
      const status = readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
      if (!kb) throw new Error('no VmRSS for the API process');
      return Number(kb) * 1024;
    },
    async healthy() {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) return false;
      return fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })
        .then((r) => r.status === 200)
        .catch(() => false);
    },
    stop: () => proc.stop(),
  };
}

/**
 * Columns a request writes whatever its outcome: a token's lastUsedAt is a hint the guard keeps
 * up to date on any authenticated request, accepted or refused.
 */
const VOLATILE: Record<string, string[]> = { ApiToken: ['lastUsedAt'] };

/** A fingerprint of every table: equal before and after means nothing was written. */
export class DatabaseFingerprint {
  private constructor(
    private readonly client: pg.Client,
    private readonly query: string,
  ) {}

  static async open(url: string): Promise<DatabaseFingerprint> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'
        ORDER BY table_name`,
    );
    const parts = rows.map(({ table_name: table }) => {
      const row = `to_jsonb(t)${(VOLATILE[table] ?? []).map((c) => ` - '${c}'`).join('')}`;
      return `SELECT '${table}' AS t, count(*)::int AS n, md5(coalesce(string_agg((${row})::text, '|' ORDER BY (${row})::text), '')) AS h FROM "${table}" t`;
    });
    return new DatabaseFingerprint(client, parts.join(' UNION ALL '));
  }

  /** `table: rows/hash` for every table, in one statement (one snapshot). */
  async take(): Promise<Record<string, string>> {
    const { rows } = await this.client.query<{ t: string; n: number; h: string }>(this.query);
    return Object.fromEntries(rows.map((r) => [r.t, `${r.n}/${r.h}`]));
  }

  /** The tables whose rows differ between two fingerprints. */
  static changed(before: Record<string, string>, after: Record<string, string>): string[] {
    return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
  }

  async sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    return (await this.client.query<T>(text, values)).rows;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * Strings an attacker would try: control characters and NUL (PostgreSQL text refuses it),
 * unpaired surrogates (no UTF-8 for them), bidi overrides, injections, very long values.
 */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string16bits({ maxLength: 8 }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.constantFrom('\u0000', '\ud800', '\udc00'))
      .map(([s, bad]) => `${s}${bad}`),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udfff',
      '\u202eevil',
      '\'; DROP TABLE "Cluster"; --',
      '../../etc/passwd',
      '${jndi:ldap://x}',
      '{{7*7}}',
      '__proto__',
      'constructor',
      'x'.repeat(70),
      'y'.repeat(300),
      'z'.repeat(70_000),
    ),
  },
);

/**
 * Issue 48, target 6: what a flood of aliases costs the API's one thread. 3,000 aliases of
 * `viewer { name }` in one 56 kB document, refused by the size limits, against a tiny query and
 * against the same flood answered by an API whose limits are raised past it (what every API did
 * before the limits), in the same run. The APIs run in the bench process (as in the reads
 * bench), so the process's CPU per request is the API's plus the client's fetch.
 */
import { loadavg } from 'node:os';
import { startApi, type Gql } from '../api/start-api.js';
import { createTestDatabase, testQueuePrefix } from '../support/database.js';

/** The flood: 3,000 aliases of `viewer { name }`, 56 kB. */
export const ALIAS_FLOOD = `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}:viewer{name}`).join(' ')} }`;
const TINY = '{ viewer { name } }';

interface Measured {
  /** Milliseconds per request. */
  ms: number[];
  /** The bench process's CPU milliseconds per request. */
  cpuMs: number;
  /** What the API answered: the first error's message, or how many fields it answered. */
  answer: string;
}

export interface FloodBenchResult {
  floodBytes: number;
  refused: Measured;
  tiny: Measured;
  /** The flood with MAX_QUERY_FIELDS and MAX_QUERY_ALIASES raised past it. */
  answered: Measured;
  load: [number, number];
}

export async function benchGraphqlFlood(runs = 100): Promise<FloodBenchResult> {
  const db = await createTestDatabase();
  const env = {
    DATABASE_URL: db.url,
    QUEUE_PREFIX: testQueuePrefix(),
    RATE_LIMIT_PER_MINUTE: '1000000',
  };
  const limited = await startApi(env);
  const unlimited = await startApi({
    ...env,
    MAX_QUERY_FIELDS: '100000',
    MAX_QUERY_ALIASES: '100000',
  });
  try {
    const cases: Record<keyof Omit<FloodBenchResult, 'floodBytes' | 'load'>, [Gql, string]> = {
      refused: [limited.as(await limited.createToken('VIEWER')), ALIAS_FLOOD],
      tiny: [limited.as(await limited.createToken('VIEWER')), TINY],
      answered: [unlimited.as(await unlimited.createToken('VIEWER')), ALIAS_FLOOD],
    };
    const measured = {} as Record<keyof typeof cases, Measured>;
    for (const [name, [client, query]] of Object.entries(cases)) {
      const first = await client(query);
      measured[name as keyof typeof cases] = {
        ms: [],
        cpuMs: 0,
        answer:
          first.errors?.[0]?.message ?? `answered ${Object.keys(first.data ?? {}).length} fields`,
      };
    }
    const once = async (name: keyof typeof cases, measure: boolean) => {
      const [client, query] = cases[name];
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      await client(query);
      if (!measure) return;
      measured[name].ms.push(performance.now() - start);
      const used = process.cpuUsage(cpuStart);
      measured[name].cpuMs += (used.user + used.system) / 1000 / runs;
    };
    // Alternated, so every case sees the same machine (shared cores) through the run.
    const names = Object.keys(cases) as (keyof typeof cases)[];
    for (let i = 0; i < 10; i++) for (const name of names) await once(name, false);
    const loadBefore = loadavg()[0]!;
    for (let i = 0; i < runs; i++) for (const name of names) await once(name, true);
    return {
      floodBytes: Buffer.byteLength(ALIAS_FLOOD),
      ...measured,
      load: [loadBefore, loadavg()[0]!],
    };
  } finally {
    await limited.app.close();
    await unlimited.app.close();
    await db.drop();
  }
}

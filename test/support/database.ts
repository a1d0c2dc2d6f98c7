import { randomBytes } from 'node:crypto';
import pg from 'pg';

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';
const template = process.env.FLEET_TEST_TEMPLATE_DB ?? 'karpenter_fleet_template';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(baseUrl, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one suite: a copy of the template that `npm test`'s set-up
 * migrates, so suites run in parallel without seeing each other's rows. With `empty`, a database
 * with no tables at all, for what must migrate it itself.
 */
export async function createTestDatabase({ empty = false } = {}): Promise<TestDatabase> {
  const name = `fleet_test_${randomBytes(5).toString('hex')}`;
  if (empty) {
    await admin((c) => c.query(`CREATE DATABASE "${name}"`));
    return testDatabase(name);
  }
  // CREATE DATABASE ... TEMPLATE fails while another session is connected to the template.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
      break;
    } catch (err) {
      if (attempt >= 20 || !String(err).includes('being accessed by other users')) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  return testDatabase(name);
}

const testDatabase = (name: string): TestDatabase => ({
  name,
  url: withDatabase(baseUrl, name),
  drop: () =>
    admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
});

/** A BullMQ key prefix of its own per suite, so suites share one Redis without interfering. */
export const testQueuePrefix = (): string => `test-${randomBytes(4).toString('hex')}`;

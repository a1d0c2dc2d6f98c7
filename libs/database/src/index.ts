import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client.js';

export * from './generated/prisma/client.js';

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';

/** A Prisma client on the pg driver adapter (Prisma's query compiler, no native engine). */
export function createPrismaClient(
  databaseUrl: string,
  options: { poolSize?: number } = {},
): PrismaClient {
  return createDatabaseClients(databaseUrl, options).prisma;
}

/**
 * A Prisma client and the pg pool under it. The pool is for hot reads written in SQL (issue 48,
 * target 4): `pool.query(sql.text, sql.values)` of a `Prisma.sql` gives the same rows as
 * `$queryRaw` for the types those reads return (text, integers, booleans, timestamptz, jsonb,
 * text[]) at half the CPU, without Prisma's result mapping. The Prisma client ends the pool.
 */
export function createDatabaseClients(
  databaseUrl: string,
  options: { poolSize?: number } = {},
): { prisma: PrismaClient; pool: pg.Pool } {
  // Our own pool, so every connection gets an error listener: a backend terminated between two
  // queries (a PostgreSQL restart, pg_terminate_backend) must fail the next query, not emit an
  // unhandled 'error' that kills the process.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  return { prisma: new PrismaClient({ adapter }), pool };
}

/** The rows of a `Prisma.sql` query, straight from the pg pool (see createDatabaseClients). */
export async function queryRows<Row>(pool: pg.Pool, query: Prisma.Sql): Promise<Row[]> {
  const result = await pool.query<Row & pg.QueryResultRow>(query.text, query.values);
  return result.rows;
}

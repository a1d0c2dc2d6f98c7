import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

export * from './generated/prisma/client.js';

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';

/** A Prisma client on the pg driver adapter (Prisma's query compiler, no native engine). */
export function createPrismaClient(
  databaseUrl: string,
  options: { poolSize?: number } = {},
): PrismaClient {
  // Our own pool, so every connection gets an error listener: a backend terminated between two
  // queries (a PostgreSQL restart, pg_terminate_backend) must fail the next query, not emit an
  // unhandled 'error' that kills the process.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  return new PrismaClient({ adapter });
}

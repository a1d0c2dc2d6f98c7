import pg from 'pg';
import type { Logger } from 'pino';

/**
 * A pg pool that survives its connections being cut (a PostgreSQL restart, a failover,
 * pg_terminate_backend): an idle client's error is logged, not thrown, and the pool opens a new
 * connection on the next checkout.
 */
export function createPgPool(connectionString: string, log: Logger, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 10_000 });
  pool.on('error', (err) => log.warn({ err: err.message }, 'idle PostgreSQL connection lost'));
  // A checked-out client whose backend dies between two queries emits 'error' with nobody
  // listening, which would kill the process; the query in flight (or the next) fails instead.
  pool.on('connect', (client) => {
    client.on('error', (err) => log.warn({ err: err.message }, 'PostgreSQL connection lost'));
  });
  return pool;
}

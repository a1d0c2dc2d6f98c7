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

/**
 * The error says PostgreSQL could not be reached or went away (connection exceptions, class 08;
 * shutdowns and "cannot connect now", 57P01–57P03; a refused, reset or timed-out socket; the
 * pool's own connection timeout), not that the statement or its data was wrong. Such a failure
 * says nothing about the report, so it must not count towards giving the report up.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (/^08/.test(code) || /^57P0[123]$/.test(code))) return true;
  if (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN)$/.test(code)
  )
    return true;
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      message,
    )
  );
}

import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { isDatabaseUnavailable } from './pg-pool.js';

describe('isDatabaseUnavailable', () => {
  it('is true for a PostgreSQL that cannot be reached, with the error pg really raises', async () => {
    // Nothing listens on port 1: the real driver's refusal, not a made-up error.
    const pool = new pg.Pool({
      connectionString: 'postgresql://nobody@127.0.0.1:1/none',
      connectionTimeoutMillis: 2_000,
    });
    const refused = await pool.query('SELECT 1').catch((err: unknown) => err);
    await pool.end();
    expect(isDatabaseUnavailable(refused)).toBe(true);
  });

  it('is true for server shutdowns and connection exceptions, false for errors in the statement or its data', () => {
    expect(isDatabaseUnavailable({ code: '57P01', message: 'terminating connection' })).toBe(true);
    expect(isDatabaseUnavailable({ code: '08006', message: 'connection failure' })).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable({ code: '23505', message: 'duplicate key value' })).toBe(false);
    expect(isDatabaseUnavailable({ code: '22P02', message: 'invalid input syntax' })).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

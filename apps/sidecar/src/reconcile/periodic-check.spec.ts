import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { pino } from 'pino';
import { PeriodicCheck } from './periodic-check.js';

const log = pino({ level: 'silent' });

describe('PeriodicCheck (the timer behind credential renewal)', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('checks every interval, runs the work only when due, survives a failure, and stops for good', async () => {
    jest.useFakeTimers();
    let due = false;
    let checks = 0;
    let runs = 0;
    const check = new PeriodicCheck({
      intervalMs: 60_000,
      what: 'test',
      log,
      due: () => {
        checks++;
        if (checks === 3) return Promise.reject(new Error('API server down'));
        return Promise.resolve(due);
      },
      run: () => {
        runs++;
        return Promise.resolve();
      },
    });
    check.start();
    await jest.advanceTimersByTimeAsync(59_999);
    expect(checks).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect([checks, runs]).toEqual([1, 0]);
    due = true;
    await jest.advanceTimersByTimeAsync(60_000);
    expect([checks, runs]).toEqual([2, 1]);
    // The third check fails; the fourth still comes.
    await jest.advanceTimersByTimeAsync(60_000);
    expect([checks, runs]).toEqual([3, 1]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect([checks, runs]).toEqual([4, 2]);
    await check.stop();
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect([checks, runs]).toEqual([4, 2]);
  });

  it('never overlaps: the next interval starts when a slow check ends', async () => {
    jest.useFakeTimers();
    let running = 0;
    let most = 0;
    let runs = 0;
    const check = new PeriodicCheck({
      intervalMs: 1_000,
      what: 'test',
      log,
      due: () => Promise.resolve(true),
      run: async () => {
        runs++;
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5_000));
        running--;
      },
    });
    check.start();
    await jest.advanceTimersByTimeAsync(1_000 + 5_000 + 1_000 + 5_000);
    expect(runs).toBe(2);
    expect(most).toBe(1);
    await check.stop();
  });

  it('refuses an interval that is not a positive number', () => {
    const opts = {
      what: 'operand credentials',
      log,
      due: () => Promise.resolve(false),
      run: () => Promise.resolve(),
    };
    expect(() => new PeriodicCheck({ ...opts, intervalMs: 0 })).toThrow(
      'operand credentials: intervalMs must be a positive number of milliseconds',
    );
    expect(() => new PeriodicCheck({ ...opts, intervalMs: Number.NaN })).toThrow(/intervalMs/);
  });
});

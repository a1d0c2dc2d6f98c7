import { describe, expect, it } from '@jest/globals';
import { parseDateTime } from './date-time.scalar.js';

describe('DateTime scalar', () => {
  it('takes RFC 3339 date-times, with Z or an offset, as the API writes them', () => {
    expect(parseDateTime('2026-12-01T08:00:00Z').toISOString()).toBe('2026-12-01T08:00:00.000Z');
    expect(parseDateTime('2026-12-01T08:00:00.123Z').toISOString()).toBe(
      '2026-12-01T08:00:00.123Z',
    );
    expect(parseDateTime('2026-12-01T09:00:00+01:00').toISOString()).toBe(
      '2026-12-01T08:00:00.000Z',
    );
    expect(parseDateTime('2024-02-29T00:00:00Z').toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  it('refuses what new Date() would have made something of', () => {
    for (const value of [
      '2026-13-45T99:00:00Z',
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-12-01',
      '2026-12-01 08:00:00',
      'Tue, 01 Dec 2026 08:00:00 GMT',
      '0',
      '',
      1_700_000_000_000,
      null,
      {},
    ])
      expect(() => parseDateTime(value)).toThrow(/RFC 3339/);
  });
});

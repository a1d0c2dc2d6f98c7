import { credentialsLifetimeMs } from './report-gate.js';

describe('credentialsLifetimeMs', () => {
  it('is between half and all of the cache time, never longer', () => {
    expect(credentialsLifetimeMs(600_000, () => 0)).toBe(300_000);
    expect(credentialsLifetimeMs(600_000, () => 0.999999)).toBeLessThanOrEqual(600_000);
    for (let i = 0; i < 1000; i++) {
      const lifetime = credentialsLifetimeMs(600_000);
      expect(lifetime).toBeGreaterThanOrEqual(300_000);
      expect(lifetime).toBeLessThanOrEqual(600_000);
    }
  });

  it('spreads the expiries of credentials read together over the second half of the cache time', () => {
    // 10,000 reads in the same instant expire over 300 s, not in the same second.
    const seconds = new Set(
      Array.from({ length: 10_000 }, () => Math.floor(credentialsLifetimeMs(600_000) / 1000)),
    );
    expect(seconds.size).toBeGreaterThan(290);
  });
});

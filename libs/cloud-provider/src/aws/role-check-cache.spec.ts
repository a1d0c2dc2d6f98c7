import { describe, expect, it } from '@jest/globals';
import { RoleCheckCache } from './role-check-cache.js';

const A = 'arn:aws:iam::111111111111:role/karpenter-a';
const B = 'arn:aws:iam::111111111111:role/karpenter-b';

describe('RoleCheckCache', () => {
  const clock = () => {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it('keeps a passing verdict for its role and statements until the TTL ends', () => {
    const c = clock();
    const cache = new RoleCheckCache(60_000, c.now);
    expect(cache.passed(A, 's1')).toBe(false);
    cache.remember(A, 's1');
    expect(cache.passed(A, 's1')).toBe(true);
    c.advance(59_999);
    expect(cache.passed(A, 's1')).toBe(true);
    c.advance(1);
    expect(cache.passed(A, 's1')).toBe(false);
    // Expired means gone: it does not come back.
    c.advance(-10_000);
    expect(cache.passed(A, 's1')).toBe(false);
  });

  it('a change of desired role drops the verdict, so going back checks the first role again', () => {
    const cache = new RoleCheckCache(60_000, clock().now);
    cache.remember(A, 's1');
    expect(cache.passed(B, 's1')).toBe(false);
    expect(cache.passed(A, 's1')).toBe(false);
  });

  it('a change of what is asked of the role (other statements) is not answered from the cache', () => {
    const cache = new RoleCheckCache(60_000, clock().now);
    cache.remember(A, 's1');
    expect(cache.passed(A, 's2')).toBe(false);
    expect(cache.passed(A, 's1')).toBe(false);
  });

  it('forget() drops the verdict; a TTL of 0 keeps nothing', () => {
    const cache = new RoleCheckCache(60_000, clock().now);
    cache.remember(A, 's1');
    cache.forget();
    expect(cache.passed(A, 's1')).toBe(false);
    const off = new RoleCheckCache(0, clock().now);
    off.remember(A, 's1');
    expect(off.passed(A, 's1')).toBe(false);
  });
});

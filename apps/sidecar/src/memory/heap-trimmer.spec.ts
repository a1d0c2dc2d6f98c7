import { describe, expect, it } from '@jest/globals';
import { HeapTrimmer } from './heap-trimmer.js';

const MB = 2 ** 20;

describe('HeapTrimmer', () => {
  it('collects only when the heap outgrew its last live size by the slack, then measures from what is live', () => {
    let heap = 40 * MB;
    const collected: number[] = [];
    const trimmer = new HeapTrimmer({
      intervalMs: 60_000,
      slackBytes: 16 * MB,
      heapUsed: () => heap,
      collect: () => {
        collected.push(heap);
        heap = 45 * MB;
      },
    });
    heap = 50 * MB;
    expect(trimmer.check()).toBe(false);
    heap = 90 * MB;
    expect(trimmer.check()).toBe(true);
    expect(collected).toEqual([90 * MB]);
    // live is now 45 MB: 60 MB is within the slack of it, 62 MB is not
    heap = 60 * MB;
    expect(trimmer.check()).toBe(false);
    heap = 62 * MB;
    expect(trimmer.check()).toBe(true);
    expect(trimmer.collections).toBe(2);
  });

  it('returns a burst’s garbage with V8’s own full collection', () => {
    const trimmer = new HeapTrimmer({ intervalMs: 60_000, slackBytes: 8 * MB });
    // A burst's objects, unreachable once the burst is over.
    const burst = () =>
      Array.from({ length: 400_000 }, (_, index) => ({ index, text: `object ${index}` })).length;
    expect(burst()).toBe(400_000);
    const before = process.memoryUsage().heapUsed;
    expect(trimmer.check()).toBe(true);
    expect(process.memoryUsage().heapUsed).toBeLessThan(before - 8 * MB);
  });
});

import { describe, expect, it } from '@jest/globals';
import { pickEncoding, type ContentEncoding } from './console-static.middleware.js';

const both = new Set<ContentEncoding>(['br', 'gzip']);

describe('pickEncoding', () => {
  it.each([
    ['gzip, deflate, br, zstd', both, 'br'],
    ['br', both, 'br'],
    ['gzip', both, 'gzip'],
    ['GZIP ; q=0.5, deflate', both, 'gzip'],
    ['x-gzip', both, 'gzip'],
    ['gzip, br;q=0', both, 'gzip'],
    ['gzip;q=0, br;q=0', both, undefined],
    ['br;q=0.0', new Set<ContentEncoding>(['br']), undefined],
    ['*', both, 'br'],
    ['*, br;q=0', both, 'gzip'],
    ['*;q=0', both, undefined],
    ['identity', both, undefined],
    ['deflate', both, undefined],
    ['', both, undefined],
    [undefined, both, undefined],
    ['br, gzip', new Set<ContentEncoding>(['gzip']), 'gzip'],
    ['br, gzip', new Set<ContentEncoding>(), undefined],
    ['br;q=oops, gzip', both, 'gzip'],
  ] as const)('Accept-Encoding %p with %p on disk: %p', (header, available, expected) => {
    expect(pickEncoding(header, available)).toBe(expected);
  });
});

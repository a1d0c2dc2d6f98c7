import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseEnv, port, postgresUrl, redisUrl } from './env.js';

const schema = z.object({ DATABASE_URL: postgresUrl, REDIS_URL: redisUrl, PORT: port(3000) });

describe('parseEnv', () => {
  it('applies local defaults', () => {
    expect(parseEnv(schema, {})).toEqual({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORT: 3000,
    });
  });

  it('names every bad variable and the reason', () => {
    expect(() => parseEnv(schema, { REDIS_URL: 'http://x', PORT: '70000' })).toThrow(
      /REDIS_URL: must be a redis:\/\/ URL[\s\S]*PORT: .*65535/,
    );
  });
});

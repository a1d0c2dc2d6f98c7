import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { FLEET_RELEASE } from './release.js';

describe('FLEET_RELEASE', () => {
  it('is the version package.json declares', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(FLEET_RELEASE).toBe(pkg.version);
  });
});

// Run only by jest-exits.spec.ts (the `jest-guard` project exists only when it asks for it): a test
// that fails and leaves a server listening, the shape of a suite whose beforeAll threw half-way.
import { expect, it } from '@jest/globals';
import { createServer } from 'node:net';

it('fails and leaves a handle open', () => {
  createServer().listen(0, '127.0.0.1');
  setInterval(() => undefined, 1000);
  expect('a failing assertion').toBe('what the fixture expects');
});

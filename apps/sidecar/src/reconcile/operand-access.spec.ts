import { describe, expect, it } from '@jest/globals';

import { untilOperandAccess } from './operand-access.js';

describe('untilOperandAccess', () => {
  it('asks the API server until it authorizes the sidecar in the namespace', async () => {
    const asked: unknown[] = [];
    let answers = [false, false, true];
    await untilOperandAccess(
      {
        allowed: (attributes) => {
          asked.push(attributes);
          const [first, ...rest] = answers;
          answers = rest;
          return Promise.resolve(first ?? true);
        },
      },
      'openshift-karpenter',
    );
    expect(asked).toEqual(
      Array(3).fill({
        verb: 'list',
        resource: 'serviceaccounts',
        namespace: 'openshift-karpenter',
      }),
    );
  });

  it('gives up at the deadline, leaving the refusal to the write and its retry', async () => {
    let asked = 0;
    await untilOperandAccess(
      {
        allowed: () => {
          asked++;
          return Promise.resolve(false);
        },
      },
      'openshift-karpenter',
      300,
    );
    expect(asked).toBeGreaterThan(1);
  });
});

import { describe, expect, it } from '@jest/globals';

import { autoNodeConditions, autoNodeEnabledCondition, type AutoNodeView } from './autonode.js';

// Issue 42, point 10: HyperShift's AutoNodeEnabled is trusted only for the generation it saw,
// and its evaluation failure is the fleet's Degraded.

const hostedCluster = (generation: number, condition: Record<string, unknown>) => ({
  metadata: { name: 'alpha', namespace: 'clusters', generation },
  status: { conditions: [{ type: 'AutoNodeEnabled', ...condition }] },
});

const view = (autoNodeEnabled: AutoNodeView['autoNodeEnabled']): AutoNodeView => ({
  enabled: true,
  mode: {
    autoNodeConfigured: true,
    hypershiftOperator: true,
    operand: { replicas: 1, availableReplicas: 1, updatedReplicas: 1 },
  },
  ...(autoNodeEnabled ? { autoNodeEnabled } : {}),
  counts: {},
});

describe('AutoNodeEnabled as the fleet reads it', () => {
  it('is pending while HyperShift has not evaluated the generation the fleet wrote', () => {
    const stale = autoNodeEnabledCondition(
      hostedCluster(5, {
        status: 'False',
        reason: 'AutoNodeNotConfigured',
        message: 'AutoNode provisioner is not configured',
        observedGeneration: 4,
      }),
    );
    expect(stale).toEqual({
      type: 'AutoNodeEnabled',
      status: 'Unknown',
      reason: 'AutoNodeEvaluationPending',
      message:
        'HyperShift has not evaluated generation 5 of the HostedCluster yet (its AutoNodeEnabled is of generation 4: AutoNodeNotConfigured, AutoNode provisioner is not configured)',
    });
    const conditions = autoNodeConditions(view(stale));
    expect(conditions.find((c) => c.type === 'Available')).toMatchObject({ status: 'False' });
  });

  it('is HyperShift’s own once it has seen the current generation', () => {
    expect(
      autoNodeEnabledCondition(
        hostedCluster(5, {
          status: 'True',
          reason: 'AsExpected',
          message: 'AutoNode is ready',
          observedGeneration: 5,
        }),
      ),
    ).toEqual({
      type: 'AutoNodeEnabled',
      status: 'True',
      reason: 'AsExpected',
      message: 'AutoNode is ready',
    });
  });

  it('reports Degraded when HyperShift cannot evaluate AutoNode', () => {
    const failed = autoNodeEnabledCondition(
      hostedCluster(5, {
        status: 'Unknown',
        reason: 'AutoNodeEvaluationFailed',
        message: 'failed to list ControlPlaneComponents: timeout',
        observedGeneration: 5,
      }),
    );
    expect(autoNodeConditions(view(failed)).find((c) => c.type === 'Degraded')).toEqual({
      type: 'Degraded',
      status: 'True',
      reason: 'AutoNodeEvaluationFailed',
      message:
        'HyperShift cannot evaluate AutoNode: failed to list ControlPlaneComponents: timeout',
    });
    const ready = autoNodeEnabledCondition(
      hostedCluster(5, {
        status: 'True',
        reason: 'AsExpected',
        message: '',
        observedGeneration: 5,
      }),
    );
    expect(autoNodeConditions(view(ready)).find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'False',
    });
  });
});

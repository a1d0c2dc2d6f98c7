import { describe, expect, it } from '@jest/globals';
import { driftFields, driftObject } from './drift.js';

describe('drift entries as the cluster page shows them', () => {
  it('names the object, with its namespace and the API server when it is not the workload', () => {
    expect(
      driftObject({ kind: 'NodePool', name: 'general', namespace: null, target: 'workload' }),
    ).toBe('NodePool general');
    expect(
      driftObject({
        kind: 'MachineDeployment',
        name: 'karpenter-fleet-a',
        namespace: 'capi-east',
        target: 'management',
      }),
    ).toBe('MachineDeployment capi-east/karpenter-fleet-a (management cluster)');
  });

  it('lists each field with the manager that took it, counts the rest, and says when the object was deleted', () => {
    expect(
      driftFields({
        change: 'Modified',
        fields: [
          { path: '.spec.limits.cpu', manager: 'kubectl-edit' },
          { path: '.spec.weight', manager: null },
        ],
        moreFields: 3,
      }),
    ).toBe('.spec.limits.cpu by kubectl-edit, .spec.weight, 3 more');
    expect(driftFields({ change: 'Deleted', fields: [], moreFields: 0 })).toBe(
      'the whole object (deleted)',
    );
  });
});

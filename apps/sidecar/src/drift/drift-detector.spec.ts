import { FIELD_MANAGER } from '@fleet/contracts';
import pino from 'pino';
import { DriftDetector, type WatchedObject } from './drift-detector.js';
import { displayPath, fieldsV1Leaves, ownerOf } from './managed-fields.js';

const log = pino({ level: 'silent' });

const fleetFields = {
  'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/managed-by': {} } },
  'f:spec': {
    'f:limits': { 'f:cpu': {} },
    'f:template': {
      'f:spec': {
        'f:requirements': { 'k:{"key":"kubernetes.io/arch"}': { '.': {}, 'f:values': {} } },
      },
    },
  },
};

function nodePool(
  resourceVersion: string,
  managedFields: WatchedObject['metadata'] extends infer M
    ? M extends { managedFields?: infer F }
      ? F
      : never
    : never,
): WatchedObject {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default', resourceVersion, managedFields },
  };
}

const applied = () =>
  nodePool('10', [{ manager: FIELD_MANAGER, operation: 'Apply', fieldsV1: fleetFields }]);

function detector() {
  const changes: boolean[] = [];
  let clock = Date.parse('2026-12-01T10:00:00Z');
  const d = new DriftDetector({
    log,
    onChange: (drifted) => changes.push(drifted),
    now: () => new Date(clock),
  });
  return { d, changes, tick: (ms: number) => (clock += ms) };
}

describe('managed fields', () => {
  it('lists leaves, shows paths as kubectl does and finds who owns a path', () => {
    const leaves = fieldsV1Leaves(fleetFields);
    expect([...leaves].map(displayPath).sort()).toEqual([
      '.metadata.labels.app.kubernetes.io/managed-by',
      '.spec.limits.cpu',
      '.spec.template.spec.requirements[key="kubernetes.io/arch"]',
      '.spec.template.spec.requirements[key="kubernetes.io/arch"].values',
    ]);
    const entries = [
      { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': { 'f:limits': {} } } },
    ];
    // An atomic field owned as a whole owns what is inside it.
    expect(ownerOf(entries, 'f:spec\nf:limits\nf:cpu')).toBe('kubectl-edit');
    expect(ownerOf(entries, 'f:spec\nf:disruption')).toBeUndefined();
  });
});

describe('DriftDetector', () => {
  it('reports a managed field another manager took, with its path and manager', () => {
    const { d, changes } = detector();
    d.recordApplied('workload', applied());
    d.observe(
      'MODIFIED',
      nodePool('11', [
        {
          manager: FIELD_MANAGER,
          operation: 'Apply',
          fieldsV1: { ...fleetFields, 'f:spec': { ...fleetFields['f:spec'], 'f:limits': {} } },
        },
        {
          manager: 'sre-hand-edit',
          operation: 'Update',
          fieldsV1: { 'f:spec': { 'f:limits': { 'f:cpu': {} } } },
        },
      ]),
    );
    expect(changes).toEqual([true]);
    expect(d.list()).toEqual([
      expect.objectContaining({
        kind: 'NodePool',
        name: 'default',
        change: 'Modified',
        fields: [{ path: '.spec.limits.cpu', manager: 'sre-hand-edit' }],
      }),
    ]);
    expect(d.condition('REPORT')).toMatchObject({ status: 'True', reason: 'LeftInPlace' });
    expect(d.held(applied(), 'REPORT')).toBe(true);
    expect(d.held(applied(), 'CORRECT')).toBe(false);
    // The fleet applies again: it owns the field again, and the entry is a correction.
    d.recordApplied('workload', nodePool('12', applied().metadata!.managedFields!));
    expect(d.list()[0]?.correctedAt).toBe('2026-12-01T10:00:00.000Z');
    expect(d.condition('CORRECT')).toMatchObject({ status: 'False', reason: 'Corrected' });
    expect(d.held(applied(), 'REPORT')).toBe(false);
  });

  it('does not report fields the fleet never applied (an admin label) nor stale events', () => {
    const { d, changes } = detector();
    d.recordApplied('workload', applied());
    d.observe(
      'MODIFIED',
      nodePool('11', [
        ...applied().metadata!.managedFields!,
        {
          manager: 'admin',
          operation: 'Update',
          fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } } },
        },
      ]),
    );
    // An event from before the fleet's apply lacks what the apply added: not drift.
    d.observe('MODIFIED', nodePool('9', []));
    expect(changes).toEqual([]);
    expect(d.list()).toEqual([]);
    expect(d.condition(undefined)).toMatchObject({ status: 'False', reason: 'NoDrift' });
  });

  it('reports a deletion, forgets what the fleet stopped wanting, and expires corrections', () => {
    const { d, tick } = detector();
    d.recordApplied('workload', applied());
    d.observe('DELETED', nodePool('11', []));
    expect(d.list()).toEqual([
      expect.objectContaining({ change: 'Deleted', fields: [], name: 'default' }),
    ]);
    expect(d.condition('CORRECT').message).toContain('NodePool default deleted');
    d.recordApplied('workload', nodePool('12', applied().metadata!.managedFields!));
    tick(61 * 60 * 1000);
    expect(d.list()).toEqual([]);
    // No longer wanted (pruned by the fleet): its deletion is not drift.
    d.retain([]);
    d.observe('DELETED', nodePool('13', []));
    expect(d.list()).toEqual([]);
  });

  it('names the last other writer of a field removed outright', () => {
    const { d } = detector();
    d.recordApplied('workload', applied());
    d.observe(
      'MODIFIED',
      nodePool('11', [
        { manager: FIELD_MANAGER, operation: 'Apply', fieldsV1: { 'f:metadata': {} } },
        {
          manager: 'kubectl-patch',
          operation: 'Update',
          time: '2026-12-01T10:00:00Z',
          fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:x': {} } } },
        },
      ]),
    );
    const [entry] = d.list();
    expect(entry?.fields).toHaveLength(4);
    expect(entry?.fields.every((f) => f.manager === 'kubectl-patch')).toBe(true);
  });
});

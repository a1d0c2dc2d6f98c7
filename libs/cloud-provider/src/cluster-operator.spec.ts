import { describe, expect, it } from '@jest/globals';
import { AwsStandaloneCloudProvider } from './aws/provider.js';
import { clusterOperatorRow } from './cluster-operator.js';
import { CRDS_DIR, loadCrdValidator } from '@fleet/testing';
import type {
  KarpenterObservation,
  OperandObservation,
  OperatorCondition,
  OperatorStatusInput,
} from './types.js';

const provider = new AwsStandaloneCloudProvider();
const crd = loadCrdValidator(`${CRDS_DIR}openshift/config.openshift.io_clusteroperators.yaml`);
const T0 = new Date('2026-11-20T10:00:00.123Z');
const T1 = new Date('2026-11-20T10:05:00.000Z');

const present = (replicas: number, availableReplicas: number, updatedReplicas: number) =>
  ({ state: 'present', replicas, availableReplicas, updatedReplicas }) as const;

const input = (
  karpenter: KarpenterObservation,
  operand: OperandObservation,
  extra: Partial<OperatorStatusInput> = {},
): OperatorStatusInput => ({ karpenter, operand, version: '0.1.0', now: T0, ...extra });

const conditionsOf = (i: OperatorStatusInput) =>
  (provider.renderClusterOperator(i).object.status as { conditions: OperatorCondition[] })
    .conditions;

const summary = (i: OperatorStatusInput) =>
  conditionsOf(i).map((c) => `${c.type}=${c.status}/${c.reason}`);

describe('ClusterOperator karpenter', () => {
  // DOMAIN.md's table, every condition of every row: Available stays True in the Progressing
  // and Degraded rows (Available=False pages on-call on OpenShift), as the upstream controller
  // does; the reason sits on the condition that is True for the row, AsExpected elsewhere.
  const rows: [string, OperatorStatusInput, [string, string, string], string][] = [
    [
      'no Karpenter CR',
      input({ state: 'missing' }, present(2, 2, 2)),
      ['True', 'False', 'False'],
      'KarpenterNotFound',
    ],
    [
      'error reading the CR',
      input({ state: 'error', message: 'forbidden' }, present(2, 2, 2)),
      ['True', 'False', 'True'],
      'KarpenterCheckFailed',
    ],
    [
      'operand Deployment missing',
      input({ state: 'present' }, { state: 'missing' }),
      ['True', 'True', 'False'],
      'OperandNotYetCreated',
    ],
    [
      'error reading the Deployment',
      input({ state: 'present' }, { state: 'error', message: 'timeout' }),
      ['True', 'False', 'True'],
      'OperandCheckFailed',
    ],
    [
      'availableReplicas < 1',
      input({ state: 'present' }, present(2, 0, 2)),
      ['True', 'True', 'False'],
      'OperandNotReady',
    ],
    [
      'updatedReplicas != replicas',
      input({ state: 'present' }, present(2, 2, 1)),
      ['True', 'True', 'False'],
      'OperandRollingOut',
    ],
    [
      'otherwise',
      input({ state: 'present' }, present(2, 2, 2)),
      ['True', 'False', 'False'],
      'AsExpected',
    ],
  ];

  it.each(rows)('%s', (_situation, i, [available, progressing, degraded], reason) => {
    // The row's reason is on Degraded when it is True, else on Progressing when True, else on
    // Available.
    const rowType =
      degraded === 'True' ? 'Degraded' : progressing === 'True' ? 'Progressing' : 'Available';
    const statuses = { Available: available, Progressing: progressing, Degraded: degraded };
    const expected = (['Available', 'Progressing', 'Degraded'] as const).map(
      (t) => `${t}=${statuses[t]}/${t === rowType ? reason : 'AsExpected'}`,
    );
    expect(summary(i)).toEqual([...expected, 'Upgradeable=True/AsExpected']);
    expect(clusterOperatorRow(conditionsOf(i))).toMatchObject({ type: rowType, reason });
    const object = provider.renderClusterOperator(i).object;
    expect(crd.validate(object).errors).toEqual([]);
  });

  it('names the error it could not read in the message', () => {
    const degraded = conditionsOf(
      input({ state: 'error', message: 'forbidden' }, { state: 'missing' }),
    );
    expect(degraded.find((c) => c.type === 'Degraded')?.message).toContain('forbidden');
  });

  it('checks the CR before the Deployment', () => {
    expect(summary(input({ state: 'missing' }, { state: 'error', message: 'x' }))[0]).toBe(
      'Available=True/KarpenterNotFound',
    );
  });

  it('renders versions, relatedObjects and second-precision times', () => {
    const object = provider.renderClusterOperator(
      input({ state: 'present' }, present(2, 2, 2)),
    ).object;
    expect(object).toMatchObject({
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterOperator',
      metadata: { name: 'karpenter' },
      spec: {},
    });
    const status = object.status as {
      versions: unknown;
      relatedObjects: { group: string; resource: string; name: string }[];
      conditions: OperatorCondition[];
    };
    expect(status.versions).toEqual([{ name: 'operator', version: '0.1.0' }]);
    expect(status.relatedObjects).toEqual(
      expect.arrayContaining([
        { group: '', resource: 'namespaces', name: 'openshift-karpenter' },
        {
          group: 'apps',
          resource: 'deployments',
          namespace: 'openshift-karpenter',
          name: 'karpenter',
        },
        {
          group: 'rbac.authorization.k8s.io',
          resource: 'clusterroles',
          name: 'openshift-karpenter',
        },
        { group: 'karpenter.sh', resource: 'nodepools', name: '' },
        { group: 'karpenter.sh', resource: 'nodeclaims', name: '' },
        { group: 'karpenter.k8s.aws', resource: 'ec2nodeclasses', name: '' },
      ]),
    );
    expect(status.conditions.every((c) => c.lastTransitionTime === '2026-11-20T10:00:00Z')).toBe(
      true,
    );
  });

  it('moves lastTransitionTime only for conditions whose status changed', () => {
    const before = conditionsOf(input({ state: 'present' }, present(2, 2, 2)));
    const after = conditionsOf(
      input({ state: 'present' }, present(2, 2, 1), { previousConditions: before, now: T1 }),
    );
    const at = (cs: OperatorCondition[], type: string) => cs.find((c) => c.type === type);
    expect(at(after, 'Progressing')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-11-20T10:05:00Z',
    });
    // Available stays True through a rollout, so its transition time does not move.
    expect(at(after, 'Available')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-11-20T10:00:00Z',
    });
    expect(at(after, 'Degraded')?.lastTransitionTime).toBe('2026-11-20T10:00:00Z');
    expect(at(after, 'Upgradeable')?.lastTransitionTime).toBe('2026-11-20T10:00:00Z');

    // A reason or message change alone is not a transition.
    const again = conditionsOf(
      input({ state: 'present' }, present(3, 3, 1), { previousConditions: after, now: T0 }),
    );
    expect(at(again, 'Progressing')?.lastTransitionTime).toBe('2026-11-20T10:05:00Z');
  });

  it('is deterministic', () => {
    const i = input({ state: 'present' }, present(2, 2, 2));
    expect(JSON.stringify(provider.renderClusterOperator(i))).toBe(
      JSON.stringify(provider.renderClusterOperator({ ...i })),
    );
  });

  it('puts a refusal first where the fleet stands for the Karpenter CR (Azure): Degraded with its reason', () => {
    const refused = input(
      { state: 'present' },
      { state: 'missing' },
      {
        refusal: { reason: 'ImageNotSupported', message: 'the workers boot a gallery image' },
      },
    );
    expect(summary(refused)).toEqual([
      'Available=True/AsExpected',
      'Progressing=False/AsExpected',
      'Degraded=True/ImageNotSupported',
      'Upgradeable=True/AsExpected',
    ]);
    expect(crd.validate(provider.renderClusterOperator(refused).object).errors).toEqual([]);
  });
});

import { describe, expect, it } from '@jest/globals';
import type { ClusterAutoscalerMode, ClusterAutoscalerState } from '@fleet/contracts';
import type { ClusterAutoscalerOutcome } from './cluster-autoscaler.js';
import {
  CombinedClusterAutoscalerSwitch,
  nodeGroupKinds,
  openShiftAutoscalerKinds,
} from './combined.js';
import type { ClusterAutoscalerControl } from './node-group-sizes.js';

type Observed = ClusterAutoscalerState['observed'];

/** A part that reports a fixed outcome and records the modes it was asked to reconcile. */
function part(
  observed: Observed,
  extra: Partial<ClusterAutoscalerState> & { message: string },
): ClusterAutoscalerControl & { modes: ClusterAutoscalerMode[] } {
  const modes: ClusterAutoscalerMode[] = [];
  const outcome = (mode: ClusterAutoscalerMode): ClusterAutoscalerOutcome => {
    const { message, ...state } = extra;
    return {
      state: { mode, observed, machineAutoscalers: 0, ...state },
      conditions: [
        observed === 'Removed'
          ? {
              type: 'ClusterAutoscalerDisabled',
              status: 'True',
              reason: 'RemovedHere',
              message,
            }
          : {
              type: 'ClusterAutoscalerDisabled',
              status: 'False',
              reason:
                observed === 'Present' ? 'ClusterAutoscalerActive' : 'ClusterAutoscalerAbsent',
              message,
            },
      ],
    };
  };
  return {
    modes,
    observedKinds: () => [],
    reconcile: (mode) => {
      modes.push(mode);
      return Promise.resolve(outcome(mode));
    },
    observe: (mode) => Promise.resolve(outcome(mode)),
  };
}

const combined = (a: ClusterAutoscalerControl, b: ClusterAutoscalerControl) =>
  new CombinedClusterAutoscalerSwitch([
    { control: a, kinds: openShiftAutoscalerKinds },
    { control: b, kinds: nodeGroupKinds },
  ]);

describe('CombinedClusterAutoscalerSwitch (OpenShift objects and Cluster API size annotations)', () => {
  it('acts on both parts in every mode', async () => {
    const a = part('Present', { machineAutoscalers: 3, message: 'ca' });
    const b = part('Present', { machineAutoscalers: 2, message: 'ng' });
    for (const mode of ['DISABLE', 'KEEP', 'MIGRATE'] as const)
      await combined(a, b).reconcile(mode, true);
    expect(a.modes).toEqual(['DISABLE', 'KEEP', 'MIGRATE']);
    expect(b.modes).toEqual(['DISABLE', 'KEEP', 'MIGRATE']);
  });

  it('running if either part runs it, and the kinds found named', async () => {
    const out = await combined(
      part('Removed', { message: 'objects removed' }),
      part('Present', {
        machineAutoscalers: 2,
        observedKinds: ['MachineDeployment', 'MachineSet'],
        message: 'groups managed',
      }),
    ).observe('DISABLE', true);
    expect(out.state).toEqual({
      mode: 'DISABLE',
      observed: 'Present',
      machineAutoscalers: 2,
      observedKinds: ['MachineDeployment', 'MachineSet'],
    });
    expect(out.conditions).toEqual([
      {
        type: 'ClusterAutoscalerDisabled',
        status: 'False',
        reason: 'ClusterAutoscalerActive',
        message: 'groups managed',
      },
    ]);
  });

  it('removed by the fleet only when no part runs it; both removed is DisabledByFleet', async () => {
    const both = await combined(
      part('Removed', { message: 'objects removed' }),
      part('Removed', { observedKinds: [], message: 'annotations removed' }),
    ).observe('DISABLE', true);
    expect(both.state).toMatchObject({ observed: 'Removed', observedKinds: [] });
    expect(both.conditions[0]).toEqual({
      type: 'ClusterAutoscalerDisabled',
      status: 'True',
      reason: 'DisabledByFleet',
      message: 'objects removed; annotations removed',
    });
    const one = await combined(
      part('Absent', { message: 'no ClusterAutoscaler' }),
      part('Removed', { message: 'annotations removed' }),
    ).observe('DISABLE', true);
    expect(one.conditions[0]).toMatchObject({ status: 'True', reason: 'RemovedHere' });
    const none = await combined(
      part('Absent', { message: 'no ClusterAutoscaler' }),
      part('Absent', { message: 'no annotation' }),
    ).observe('KEEP', true);
    expect(none.state.observed).toBe('Absent');
    expect(none.conditions[0]).toMatchObject({
      status: 'False',
      reason: 'ClusterAutoscalerAbsent',
    });
  });

  it('MIGRATE says both autoscalers run, naming what runs the Cluster Autoscaler', async () => {
    const out = await combined(
      part('Present', { machineAutoscalers: 3, message: 'ClusterAutoscaler/default runs' }),
      part('Present', { observedKinds: ['MachineDeployment'], message: 'groups managed' }),
    ).reconcile('MIGRATE', true);
    expect(out.state.observedKinds).toEqual([
      'ClusterAutoscaler',
      'MachineAutoscaler',
      'MachineDeployment',
    ]);
    expect(out.conditions[1]).toEqual({
      type: 'ClusterAutoscalerMigration',
      status: 'True',
      reason: 'BothAutoscalersActive',
      message: expect.stringContaining('(ClusterAutoscaler/default runs; groups managed)'),
    });
    const off = await combined(
      part('Present', { message: 'runs' }),
      part('Absent', { message: 'none' }),
    ).reconcile('MIGRATE', false);
    expect(off.conditions[1]).toMatchObject({ status: 'False', reason: 'NotBothActive' });
  });
});

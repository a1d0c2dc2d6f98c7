import type { ClusterAutoscalerMode, ClusterAutoscalerState } from '@fleet/contracts';
import type { ClusterAutoscalerOutcome } from './cluster-autoscaler.js';
import type { ClusterAutoscalerControl, ObservedKind } from './node-group-sizes.js';

type Condition = ClusterAutoscalerOutcome['conditions'][number];

/** One of the ways the Cluster Autoscaler is configured on a cluster. */
export interface AutoscalerPart {
  control: ClusterAutoscalerControl;
  /** The kinds through which this part finds the Cluster Autoscaler in play, from its state. */
  kinds(state: ClusterAutoscalerState): string[];
}

/** OpenShift's objects: ClusterAutoscaler/default while present, and its MachineAutoscalers. */
export const openShiftAutoscalerKinds = (state: ClusterAutoscalerState): string[] => [
  ...(state.observed === 'Present' ? ['ClusterAutoscaler'] : []),
  ...(state.machineAutoscalers > 0 ? ['MachineAutoscaler'] : []),
];
/** The Cluster API node groups: the kinds of the groups that carry a size annotation. */
export const nodeGroupKinds = (state: ClusterAutoscalerState): string[] =>
  state.observedKinds ?? [];

/**
 * OpenShift's own Cluster API: the Cluster Autoscaler is configured two ways at once on the one
 * API server, OpenShift's ClusterAutoscaler/MachineAutoscaler objects and the Cluster API
 * node-group size annotations. Every mode acts on both (DISABLE takes both out of play, KEEP
 * restores both exactly, MIGRATE leaves both running) and the outcome is one: the Cluster
 * Autoscaler is running if either part runs it, removed by the fleet if either part was removed
 * and none runs, and the kinds found are reported.
 */
export class CombinedClusterAutoscalerSwitch implements ClusterAutoscalerControl {
  constructor(private readonly parts: readonly AutoscalerPart[]) {}

  observedKinds(): ObservedKind[] {
    return this.parts.flatMap((p) => p.control.observedKinds());
  }

  async reconcile(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome> {
    // One after the other: each part writes its own copy before it removes anything.
    const outcomes: ClusterAutoscalerOutcome[] = [];
    for (const p of this.parts) outcomes.push(await p.control.reconcile(mode, karpenterEnabled));
    return this.combine(mode, karpenterEnabled, outcomes);
  }

  async observe(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
  ): Promise<ClusterAutoscalerOutcome> {
    const outcomes = await Promise.all(
      this.parts.map((p) => p.control.observe(mode, karpenterEnabled)),
    );
    return this.combine(mode, karpenterEnabled, outcomes);
  }

  private combine(
    mode: ClusterAutoscalerMode,
    karpenterEnabled: boolean,
    outcomes: ClusterAutoscalerOutcome[],
  ): ClusterAutoscalerOutcome {
    const observed = (['Present', 'Removed', 'Absent'] as const).find((o) =>
      outcomes.some((x) => x.state.observed === o),
    )!;
    const state: ClusterAutoscalerState = {
      mode,
      observed,
      machineAutoscalers: outcomes.reduce((n, x) => n + x.state.machineAutoscalers, 0),
      observedKinds: [...new Set(outcomes.flatMap((x, i) => this.parts[i]!.kinds(x.state)))],
    };
    const of = (type: string): Condition[] =>
      outcomes.flatMap((x) => x.conditions.filter((c) => c.type === type));
    const messages = (cs: Condition[]) => cs.map((c) => c.message).join('; ');
    const disabled = of('ClusterAutoscalerDisabled');
    const running = disabled.filter((c) => c.reason === 'ClusterAutoscalerActive');
    const removed = disabled.filter((c) => c.status === 'True');
    const conditions: Condition[] = [
      running.length > 0
        ? {
            type: 'ClusterAutoscalerDisabled',
            status: 'False',
            reason: 'ClusterAutoscalerActive',
            message: messages(running),
          }
        : removed.length > 0
          ? {
              type: 'ClusterAutoscalerDisabled',
              status: 'True',
              reason: removed.length === 1 ? removed[0]!.reason : 'DisabledByFleet',
              message: messages(removed),
            }
          : {
              type: 'ClusterAutoscalerDisabled',
              status: 'False',
              reason: 'ClusterAutoscalerAbsent',
              message: messages(disabled),
            },
    ];
    if (mode === 'MIGRATE') {
      const both = karpenterEnabled && running.length > 0;
      conditions.push({
        type: 'ClusterAutoscalerMigration',
        status: both ? 'True' : 'False',
        reason: both ? 'BothAutoscalersActive' : 'NotBothActive',
        message: both
          ? `Karpenter and the Cluster Autoscaler both scale this cluster (${messages(running)}): a migration state; finish by switching to DISABLE or KEEP`
          : 'migration requested, but Karpenter and the Cluster Autoscaler are not both active',
      });
    }
    const migration = outcomes.find((x) => x.migration)?.migration;
    return { state, conditions, ...(migration ? { migration } : {}) };
  }
}

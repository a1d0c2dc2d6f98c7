import { CONTRACT_VERSION, type Condition } from '@fleet/contracts';

/**
 * Conditions the fleet itself sets about a cluster, next to the ones its sidecar reports. A
 * sidecar cannot set these: its report replaces the reported ones, the fleet-side ones carry over.
 */
export const FLEET_CONDITION_TYPES = ['Stale', 'OrderNotTaken', 'SidecarOutdated'] as const;
export type FleetConditionType = (typeof FLEET_CONDITION_TYPES)[number];
const isFleetType = (type: string): boolean =>
  (FLEET_CONDITION_TYPES as readonly string[]).includes(type);

export interface ConditionChange {
  type: string;
  fromStatus: string | null;
  fromReason: string | null;
  toStatus: string;
  toReason: string;
  message: string;
  at: string;
}

/** Changes of status or reason from `before` to `after`; a message-only change is not one. */
export function conditionChanges(
  before: readonly Condition[],
  after: readonly Condition[],
  at: string,
): ConditionChange[] {
  const previous = new Map(before.map((c) => [c.type, c]));
  return after.flatMap((c) => {
    const old = previous.get(c.type);
    if (old && old.status === c.status && old.reason === c.reason) return [];
    return [
      {
        type: c.type,
        fromStatus: old?.status ?? null,
        fromReason: old?.reason ?? null,
        toStatus: c.status,
        toReason: c.reason,
        message: c.message,
        at,
      },
    ];
  });
}

/**
 * The conditions after a report: the sidecar's own, plus the fleet-side ones carried over. A report
 * proves the sidecar alive (Stale clears); a report that advanced the generation proves it takes
 * orders (OrderNotTaken clears); a report of the current contract clears SidecarOutdated.
 */
export function conditionsAfterReport(
  before: readonly Condition[],
  reported: readonly Condition[],
  {
    at,
    advancedGeneration,
    contractVersion = 1,
  }: { at: string; advancedGeneration: boolean; contractVersion?: number },
): Condition[] {
  const next: Condition[] = reported.filter((c) => !isFleetType(c.type));
  for (const c of before) {
    if (!isFleetType(c.type)) continue;
    if (c.type === 'Stale' && c.status === 'True') {
      next.push({
        type: 'Stale',
        status: 'False',
        reason: 'ReportsResumed',
        message: `reports resumed at ${at}`,
        lastTransitionTime: at,
      });
    } else if (c.type === 'OrderNotTaken' && c.status === 'True' && advancedGeneration) {
      next.push({
        type: 'OrderNotTaken',
        status: 'False',
        reason: 'OrderTaken',
        message: 'the sidecar applied a newer order',
        lastTransitionTime: at,
      });
    } else if (
      c.type === 'SidecarOutdated' &&
      c.status === 'True' &&
      contractVersion >= CONTRACT_VERSION
    ) {
      next.push({
        type: 'SidecarOutdated',
        status: 'False',
        reason: 'ContractSupported',
        message: `the sidecar speaks order contract ${contractVersion}`,
        lastTransitionTime: at,
      });
    } else {
      next.push(c);
    }
  }
  return next;
}

/** `conditions` with one fleet-side condition set; lastTransitionTime moves only on a change. */
export function withCondition(
  conditions: readonly Condition[],
  set: Omit<Condition, 'lastTransitionTime'>,
  at: string,
): Condition[] {
  const old = conditions.find((c) => c.type === set.type);
  const changed = !old || old.status !== set.status || old.reason !== set.reason;
  return [
    ...conditions.filter((c) => c.type !== set.type),
    { ...set, lastTransitionTime: changed || !old ? at : old.lastTransitionTime },
  ];
}

import { compareCodeUnits } from '@fleet/contracts';
import type { Condition } from '@fleet/contracts';

type Status = Condition['status'];

/**
 * Keeps conditions in the upstream shape: lastTransitionTime moves only when status changes, so
 * a dashboard can tell "Degraded since 09:14" from "Degraded, reported again".
 */
export class ConditionSet {
  private readonly byType = new Map<string, Condition>();

  constructor(previous: readonly Condition[] = []) {
    for (const c of previous) this.byType.set(c.type, c);
  }

  set(type: string, status: Status, reason: string, message: string, now = new Date()): this {
    const prev = this.byType.get(type);
    const lastTransitionTime =
      prev && prev.status === status ? prev.lastTransitionTime : now.toISOString();
    this.byType.set(type, { type, status, reason, message, lastTransitionTime });
    return this;
  }

  get(type: string): Condition | undefined {
    return this.byType.get(type);
  }

  list(): Condition[] {
    return [...this.byType.values()].sort((a, b) => compareCodeUnits(a.type, b.type));
  }
}

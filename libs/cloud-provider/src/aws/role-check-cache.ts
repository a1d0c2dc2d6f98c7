/**
 * The verdict of the web-identity role check, kept so that every apply (each order, each
 * requeue) does not call SimulatePrincipalPolicy once per statement. Only a passing verdict is
 * kept: a role found lacking is checked again at the next apply, so a fixed policy is seen at
 * once, and a failed call (throttling, a network error) is never taken for an answer.
 *
 * One entry: a sidecar has one desired role at a time. A change of role (or of what is asked of
 * it: the statements depend on the region, the interruption queue and the account) drops the
 * entry, so going back to an earlier role checks it again. A permission removed from a role that
 * passed is noticed within `ttlMs`.
 */
export class RoleCheckCache {
  private entry: { role: string; statements: string; expiresAt: number } | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `role` passed the check of exactly `statements` less than `ttlMs` ago. */
  passed(role: string, statements: string): boolean {
    const entry = this.entry;
    if (!entry) return false;
    if (entry.role !== role || entry.statements !== statements || this.now() >= entry.expiresAt) {
      this.entry = undefined;
      return false;
    }
    return true;
  }

  remember(role: string, statements: string): void {
    if (this.ttlMs <= 0) return;
    this.entry = { role, statements, expiresAt: this.now() + this.ttlMs };
  }

  /** A failing verdict for the desired role: nothing about it is kept. */
  forget(): void {
    this.entry = undefined;
  }
}

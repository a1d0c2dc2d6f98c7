import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import type { Rollout, RolloutConnection, RolloutState } from './models/rollout.model.js';
import { RolloutQueries } from './rollout-queries.service.js';
import { RolloutStarts } from './rollout-starts.service.js';
import { RolloutSteering } from './rollout-steering.service.js';

/**
 * Starting and steering rollouts, as the resolver and the profiles see them. The API only writes
 * intent (the plan, a state change); the worker's rollout driver applies waves and judges health.
 * Each write is announced only after it committed, so a subscriber never reads a rollout that a
 * rolled-back transaction would have changed.
 */
@Injectable()
export class RolloutsService {
  constructor(
    private readonly starts: RolloutStarts,
    private readonly steering: RolloutSteering,
    private readonly queries: RolloutQueries,
    private readonly events: FleetEventsService,
  ) {}

  async start(...args: Parameters<RolloutStarts['start']>): Promise<Rollout> {
    return this.announced(args[0], await this.starts.start(...args));
  }

  async startFromPlan(...args: Parameters<RolloutStarts['startFromPlan']>): Promise<Rollout> {
    return this.announced(args[0], await this.starts.startFromPlan(...args));
  }

  /**
   * Inside the profile write's transaction, so nothing is announced here: the profile calls
   * announce once that transaction committed.
   */
  createForProfile(...args: Parameters<RolloutStarts['createForProfile']>): Promise<string> {
    return this.starts.createForProfile(...args);
  }

  /** After a profile's transaction committed: subscribers learn of its rollout. */
  async announce(rolloutId: string): Promise<void> {
    await this.changed(rolloutId);
  }

  pause(principal: Principal, uid: string): Promise<Rollout> {
    return this.steering.pause(principal, uid).then(() => this.announced(principal, uid));
  }

  /** A retried approval of a stage already approved changes nothing, so announces nothing. */
  async approve(principal: Principal, uid: string, stage: number): Promise<Rollout> {
    if (await this.steering.approve(principal, uid, stage)) await this.changed(uid);
    return this.queries.get(principal, uid);
  }

  resume(principal: Principal, uid: string): Promise<Rollout> {
    return this.steering.resume(principal, uid).then(() => this.announced(principal, uid));
  }

  abort(principal: Principal, uid: string, reason: string | null | undefined): Promise<Rollout> {
    return this.steering.abort(principal, uid, reason).then(() => this.announced(principal, uid));
  }

  get(principal: Principal, uid: string): Promise<Rollout> {
    return this.queries.get(principal, uid);
  }

  list(
    principal: Principal,
    page: { first?: number | null; after?: string | null },
    state: RolloutState | null | undefined,
  ): Promise<RolloutConnection> {
    return this.queries.list(principal, page, state);
  }

  /** The rollout as the caller may see it, once every replica's subscribers were told. */
  private async announced(principal: Principal, rolloutId: string): Promise<Rollout> {
    await this.changed(rolloutId);
    return this.queries.get(principal, rolloutId);
  }

  /** Subscribers of every replica learn of it; losing the event costs freshness, never state. */
  private async changed(rolloutId: string): Promise<void> {
    await this.events.publish({ type: 'rollout-changed', rolloutId }).catch(() => undefined);
  }
}

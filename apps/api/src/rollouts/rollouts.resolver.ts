import { Args, Context, ID, Int, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { principalOf, type AuthCarrier } from '../auth/auth.guard.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import { userInputError } from '../common/errors.js';
import { uidOf } from '../common/global-id.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { RolloutChangeInput, RolloutStrategyInput } from './dto/rollout.inputs.js';
import { Rollout, RolloutConnection, RolloutState } from './models/rollout.model.js';
import { RolloutsService } from './rollouts.service.js';

type SubscriptionContext = { req?: AuthCarrier; connection?: AuthCarrier };

const rolloutUid = (id: string, field = 'id') => uidOf('Rollout', id, field);

@Resolver(() => Rollout)
export class RolloutsResolver {
  constructor(
    private readonly service: RolloutsService,
    private readonly events: FleetEventsService,
  ) {}

  @Query(() => Rollout)
  @RequireRole('VIEWER')
  rollout(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<Rollout> {
    return this.service.get(principal, rolloutUid(id));
  }

  @Query(() => RolloutConnection, { description: 'Rollouts, newest first (first 1–100, after).' })
  @RequireRole('VIEWER')
  rollouts(
    @CurrentPrincipal() principal: Principal,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
    @Args('state', { type: () => RolloutState, nullable: true }) state: RolloutState | null,
  ): Promise<RolloutConnection> {
    return this.service.list(principal, { first, after }, state);
  }

  @Mutation(() => Rollout, {
    description:
      'Applies one change in waves to the clusters the selector matches within your scope (fixed at start, ordered by name). ' +
      'Each wave waits until all its clusters report the new generation healthy for minHealthySeconds; more than ' +
      'maxFailures Degraded, Stale or timed-out clusters stop the rollout (FAILED). ' +
      "Give either selector and change (and optionally clusterIds), or planId alone: then the plan's change goes to the " +
      "plan's PLANNED clusters, each only at the generation the plan was computed against (else SKIPPED, DesiredStateMoved); " +
      'the plan is used up (applyPlan refuses it). See docs/ROLLOUTS.md.',
  })
  @RequireRole('OPERATOR')
  startRollout(
    @CurrentPrincipal() principal: Principal,
    @Args('selector', {
      type: () => String,
      nullable: true,
      description:
        'Kubernetes label selector; "" selects every cluster in scope. Required unless planId is given.',
    })
    selector: string | null,
    @Args('change', {
      type: () => RolloutChangeInput,
      nullable: true,
      description: 'Required unless planId is given.',
    })
    change: RolloutChangeInput | null,
    @Args('strategy', { type: () => RolloutStrategyInput, nullable: true })
    strategy: RolloutStrategyInput | null,
    @Args('strategyName', {
      type: () => String,
      nullable: true,
      description:
        "A named rollout strategy (rolloutStrategies), instead of strategy: its stages are copied into this rollout's waves at start.",
    })
    strategyName: string | null,
    @Args('clusterIds', {
      type: () => [ID],
      nullable: true,
      description:
        'Narrows the selection to these clusters (global IDs, at most 1000), e.g. rows picked in the console; each must match the selector within your scope.',
    })
    clusterIds: string[] | null,
    @Args('planId', {
      type: () => ID,
      nullable: true,
      description:
        'A plan (planChange) to roll out: excludes selector, change and clusterIds. The plan must be complete (no PENDING cluster), unexpired, and not applied or rolled out already.',
    })
    planId: string | null,
  ): Promise<Rollout> {
    if (planId != null) {
      const extra = (
        [
          ['selector', selector],
          ['change', change],
          ['clusterIds', clusterIds],
        ] as const
      ).find(([, v]) => v != null);
      if (extra)
        throw userInputError(extra[0], 'give either planId, or selector and change, not both');
      return this.service.startFromPlan(principal, planId, strategy, strategyName);
    }
    if (selector == null) throw userInputError('selector', 'is required unless planId is given');
    if (change == null) throw userInputError('change', 'is required unless planId is given');
    return this.service.start(
      principal,
      selector,
      change,
      strategy,
      clusterIds?.map((id, i) => uidOf('Cluster', id, `clusterIds[${i}]`)) ?? null,
      strategyName,
    );
  }

  @Mutation(() => Rollout, {
    description:
      'WAITING_APPROVAL → RUNNING: approves the approval gate after wave `stage` (Rollout.waitingStage), so the next ' +
      'wave starts. Approving a stage already approved changes nothing; a stage not waiting is CONFLICT.',
  })
  @RequireRole('OPERATOR')
  approveRolloutStage(
    @CurrentPrincipal() principal: Principal,
    @Args('rolloutId', { type: () => ID }) rolloutId: string,
    @Args('stage', { type: () => Int, description: 'The wave index waiting for approval.' })
    stage: number,
  ): Promise<Rollout> {
    return this.service.approve(principal, rolloutUid(rolloutId, 'rolloutId'), stage);
  }

  @Mutation(() => Rollout, {
    description:
      'RUNNING → PAUSED: no new cluster is changed and health is not judged until resumed.',
  })
  @RequireRole('OPERATOR')
  pauseRollout(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<Rollout> {
    return this.service.pause(principal, rolloutUid(id));
  }

  @Mutation(() => Rollout, {
    description:
      'PAUSED or FAILED → RUNNING. Failed clusters are watched again (not re-applied); the current wave gets a fresh deadline.',
  })
  @RequireRole('OPERATOR')
  resumeRollout(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<Rollout> {
    return this.service.resume(principal, rolloutUid(id));
  }

  @Mutation(() => Rollout, {
    description:
      'Stops the rollout for good (ABORTED). Clusters already changed are NOT reverted: they keep the new desired state; ' +
      'clusters not reached yet are SKIPPED. To undo, start a rollout of the opposite change.',
  })
  @RequireRole('OPERATOR')
  abortRollout(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('reason', { type: () => String, nullable: true }) reason: string | null,
  ): Promise<Rollout> {
    return this.service.abort(principal, rolloutUid(id), reason);
  }

  @Subscription(() => Rollout, {
    description: 'The rollout each time it changes (state, a wave, a cluster).',
    resolve: (rollout: Rollout) => rollout,
  })
  @RequireRole('VIEWER')
  async rolloutChanged(
    @Context() context: SubscriptionContext,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<AsyncIterableIterator<Rollout>> {
    const principal = principalOf(context);
    const uid = rolloutUid(id);
    await this.service.get(principal, uid); // NOT_FOUND before subscribing, not silence
    const events = this.events.iterator<{ rolloutId: string }>('rollout-changed');
    const { service } = this;
    return (async function* () {
      for await (const event of { [Symbol.asyncIterator]: () => events }) {
        if (event.rolloutId === uid) yield await service.get(principal, uid);
      }
    })();
  }
}

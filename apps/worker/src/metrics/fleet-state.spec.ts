import { describe, expect, it } from '@jest/globals';
import { RolloutState } from '@fleet/database';
import { ROLLOUT_STATES } from './fleet-state.js';

describe('fleet state gauges', () => {
  it('has a rollout series for every RolloutState, WAITING_APPROVAL included', () => {
    expect([...ROLLOUT_STATES].sort()).toEqual(Object.values(RolloutState).sort());
  });
});

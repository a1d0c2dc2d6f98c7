import type { RolloutClusterState, RolloutState } from '../graphql/generated.js';

type Color = 'grey' | 'orange' | 'red' | 'blue' | 'green' | 'purple';

export const ROLLOUT_STATE_COLOR: Record<RolloutState, Color> = {
  RUNNING: 'blue',
  WAITING_APPROVAL: 'purple',
  PAUSED: 'grey',
  FAILED: 'red',
  COMPLETED: 'green',
  ABORTED: 'orange',
};

export const ROLLOUT_CLUSTER_COLOR: Record<RolloutClusterState, Color> = {
  PENDING: 'grey',
  APPLYING: 'blue',
  HEALTHY: 'green',
  FAILED: 'red',
  SKIPPED: 'orange',
};

/** What an SRE may do to a rollout in each state (the API's own transitions, docs/ROLLOUTS.md). */
export function rolloutActions(state: RolloutState): {
  pause: boolean;
  resume: boolean;
  abort: boolean;
} {
  return {
    pause: state === 'RUNNING' || state === 'WAITING_APPROVAL',
    resume: state === 'PAUSED' || state === 'FAILED',
    abort:
      state === 'RUNNING' ||
      state === 'WAITING_APPROVAL' ||
      state === 'PAUSED' ||
      state === 'FAILED',
  };
}

/** Rollouts still holding their clusters: their rows follow live. */
export const isActive = (state: RolloutState): boolean => rolloutActions(state).abort;

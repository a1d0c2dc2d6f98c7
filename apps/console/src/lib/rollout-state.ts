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

/** The label's words: the enum as the API spells it, with a space where it has two. */
export const rolloutStateText = (state: RolloutState): string => state.replace('_', ' ');

/**
 * The alert of a rollout held at an approval gate. waitingStage is the 0-based index of the wave
 * that succeeded; the console numbers waves from 1, so the wave that waits is waitingStage + 2.
 */
export const waitingForApproval = (waitingStage: number): string =>
  `Waiting for approval before wave ${waitingStage + 2}`;

/** What an SRE may do to a rollout in each state (the API's own transitions, docs/ROLLOUTS.md). */
export function rolloutActions(state: RolloutState): {
  pause: boolean;
  resume: boolean;
  abort: boolean;
  approve: boolean;
} {
  return {
    approve: state === 'WAITING_APPROVAL',
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

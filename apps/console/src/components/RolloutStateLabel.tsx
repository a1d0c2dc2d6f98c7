import { Label } from '@patternfly/react-core';
import type { RolloutClusterState, RolloutState } from '../graphql/generated.js';
import {
  ROLLOUT_CLUSTER_COLOR,
  ROLLOUT_STATE_COLOR,
  rolloutStateText,
} from '../lib/rollout-state.js';

export function RolloutStateLabel({ state }: { state: RolloutState }) {
  return (
    <Label color={ROLLOUT_STATE_COLOR[state]} isCompact data-testid="rollout-state">
      {rolloutStateText(state)}
    </Label>
  );
}

export function RolloutClusterLabel({ state }: { state: RolloutClusterState }) {
  return (
    <Label color={ROLLOUT_CLUSTER_COLOR[state]} isCompact variant="outline">
      {state}
    </Label>
  );
}

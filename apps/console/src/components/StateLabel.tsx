import { Label } from '@patternfly/react-core';
import { clusterState, STATE_COLOR } from '../lib/cluster-state.js';

export function StateLabel({ cluster }: { cluster: Parameters<typeof clusterState>[0] }) {
  const state = clusterState(cluster);
  return (
    <Label color={STATE_COLOR[state]} isCompact data-testid="cluster-state">
      {state}
    </Label>
  );
}

export function Labels({ labels }: { labels: unknown }) {
  const entries = Object.entries((labels ?? {}) as Record<string, string>);
  if (!entries.length) return <span className="fleet-muted">none</span>;
  return (
    <>
      {entries.map(([k, v]) => (
        <Label key={k} isCompact variant="outline" className="fleet-label">
          {k}={v}
        </Label>
      ))}
    </>
  );
}

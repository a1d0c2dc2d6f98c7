import { Label } from '@patternfly/react-core';
import { clusterState, relativeTime, STATE_COLOR } from '../lib/cluster-state.js';

export function StateLabel({ cluster }: { cluster: Parameters<typeof clusterState>[0] }) {
  const state = clusterState(cluster);
  return (
    <Label color={STATE_COLOR[state]} isCompact data-testid="cluster-state">
      {state}
    </Label>
  );
}

/** A relative time ("3 min ago") with the absolute one on hover and for assistive technology. */
export function When({ at, never = 'never' }: { at: string | null | undefined; never?: string }) {
  if (!at) return <span className="fleet-muted">{never}</span>;
  const absolute = new Date(at).toLocaleString();
  return (
    <time dateTime={at} title={absolute}>
      {relativeTime(at)}
    </time>
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

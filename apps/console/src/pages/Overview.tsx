import { Alert, Gallery, PageSection, Skeleton, Title } from '@patternfly/react-core';
import {
  FleetSummaryChangedDocument,
  FleetSummaryDocument,
  type SummaryFieldsFragment,
} from '../graphql/generated.js';
import { useQuery, useSubscription } from '../lib/hooks.js';
import { BreakdownCard, CountCard } from '../components/SummaryCards.js';
import { LiveUpdatesAlert } from '../components/LiveUpdatesAlert.js';

export function Overview() {
  const query = useQuery(FleetSummaryDocument, {});
  const liveError = useSubscription(FleetSummaryChangedDocument, {}, (data) =>
    query.setData(() => ({ fleetSummary: data.fleetSummaryChanged })),
  );
  const summary: SummaryFieldsFragment | undefined = query.data?.fleetSummary;
  const degraded =
    summary?.byCondition
      .filter((c) => c.type === 'Degraded' && c.status === 'True')
      .reduce((n, c) => n + c.count, 0) ?? 0;
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Fleet overview</Title>
      </PageSection>
      <PageSection>
        {query.error ? (
          <Alert variant="danger" isInline title="The fleet summary could not be loaded">
            {query.error.message}
          </Alert>
        ) : null}
        <LiveUpdatesAlert error={liveError} />
        {!summary ? (
          <Skeleton height="120px" screenreaderText="Loading the fleet summary" />
        ) : (
          <Gallery hasGutter minWidths={{ default: '180px' }}>
            <CountCard id="clusters" title="Clusters" value={summary.clusters} to="/clusters" />
            <CountCard id="in-sync" title="In sync" value={summary.inSync} />
            <CountCard
              id="progressing"
              title="Progressing"
              value={summary.clusters - summary.inSync}
            />
            <CountCard id="degraded" title="Degraded" value={degraded} />
            <CountCard id="stale" title="Stale" value={summary.stale} />
            <CountCard id="paused" title="Paused" value={summary.paused} />
            <CountCard id="karpenter" title="Karpenter enabled" value={summary.karpenterEnabled} />
            <CountCard
              id="cas-disabled"
              title="Cluster Autoscaler disabled"
              value={summary.clusterAutoscalerDisabled}
            />
            <BreakdownCard title="By platform" rows={summary.byPlatform} />
            <BreakdownCard title="By topology" rows={summary.byTopology} />
          </Gallery>
        )}
      </PageSection>
    </>
  );
}

import {
  Alert,
  Card,
  CardBody,
  CardTitle,
  Content,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  Gallery,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import {
  FleetSummaryChangedDocument,
  FleetSummaryDocument,
  type SummaryFieldsFragment,
} from '../graphql/generated.js';
import { useQuery, useSubscription } from '../lib/hooks.js';
import { Link } from '../lib/router.js';

function Count({
  title,
  value,
  to,
  id,
}: {
  title: string;
  value: number;
  to?: string;
  id: string;
}) {
  return (
    <Card isCompact>
      <CardTitle component="h2">{title}</CardTitle>
      <CardBody>
        <span className="fleet-count" data-testid={`count-${id}`}>
          {to ? <Link to={to}>{value}</Link> : value}
        </span>
      </CardBody>
    </Card>
  );
}

function Breakdown({ title, rows }: { title: string; rows: { value: string; count: number }[] }) {
  return (
    <Card isCompact>
      <CardTitle component="h2">{title}</CardTitle>
      <CardBody>
        {rows.length === 0 ? (
          <Content component="p">No clusters.</Content>
        ) : (
          <DescriptionList isHorizontal isCompact>
            {rows.map((row) => (
              <DescriptionListGroup key={row.value}>
                <DescriptionListTerm>{row.value}</DescriptionListTerm>
                <DescriptionListDescription>{row.count}</DescriptionListDescription>
              </DescriptionListGroup>
            ))}
          </DescriptionList>
        )}
      </CardBody>
    </Card>
  );
}

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
        {liveError ? (
          <Alert
            variant="warning"
            isInline
            title="Live updates are interrupted"
            className="fleet-gap"
          >
            {liveError.message}
          </Alert>
        ) : null}
        {!summary ? (
          <Skeleton height="120px" screenreaderText="Loading the fleet summary" />
        ) : (
          <Gallery hasGutter minWidths={{ default: '180px' }}>
            <Count id="clusters" title="Clusters" value={summary.clusters} to="/clusters" />
            <Count id="in-sync" title="In sync" value={summary.inSync} />
            <Count id="progressing" title="Progressing" value={summary.clusters - summary.inSync} />
            <Count id="degraded" title="Degraded" value={degraded} />
            <Count id="stale" title="Stale" value={summary.stale} />
            <Count id="paused" title="Paused" value={summary.paused} />
            <Count id="karpenter" title="Karpenter enabled" value={summary.karpenterEnabled} />
            <Count
              id="cas-disabled"
              title="Cluster Autoscaler disabled"
              value={summary.clusterAutoscalerDisabled}
            />
            <Breakdown title="By platform" rows={summary.byPlatform} />
            <Breakdown title="By topology" rows={summary.byTopology} />
          </Gallery>
        )}
      </PageSection>
    </>
  );
}

import {
  Alert,
  Card,
  CardBody,
  CardHeader,
  CardTitle,
  Content,
  Gallery,
  Grid,
  GridItem,
  List,
  ListItem,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { lazy, Suspense, useMemo, useState } from 'react';
import {
  FleetHealthHistoryDocument,
  FleetSummaryChangedDocument,
  FleetSummaryDocument,
  NeedsAttentionDocument,
  type AttentionClusterFragment,
  type SummaryFieldsFragment,
} from '../graphql/generated.js';
import { Link } from '../lib/router.js';
import { StateLabel, When } from '../components/StateLabel.js';
import { RangeToggle } from '../components/RangeToggle.js';
import { historyWindow, RANGE_HOURS, type HistoryRange } from '../components/charts/ranges.js';

// Victory and PatternFly's charts load only when a chart is drawn (the bundle budget).
const FleetHealthChart = lazy(() =>
  import('../components/charts/HistoryCharts.js').then((m) => ({ default: m.FleetHealthChart })),
);
import { useQuery, useSubscription } from '../lib/hooks.js';
import { BreakdownCard, CountCard } from '../components/SummaryCards.js';
import { LiveUpdatesAlert } from '../components/LiveUpdatesAlert.js';

export function Overview() {
  const query = useQuery(FleetSummaryDocument, {});
  const liveError = useSubscription(FleetSummaryChangedDocument, {}, (data) =>
    query.setData(() => ({ fleetSummary: data.fleetSummaryChanged })),
  );
  const summary: SummaryFieldsFragment | undefined = query.data?.fleetSummary;
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
            {/* One health state per cluster: these five add up to the clusters. */}
            <CountCard id="healthy" title="Healthy" value={summary.byHealth.healthy} />
            <CountCard id="progressing" title="Progressing" value={summary.byHealth.progressing} />
            <CountCard id="degraded" title="Degraded" value={summary.byHealth.degraded} />
            <CountCard id="stale" title="Stale" value={summary.byHealth.stale} />
            <CountCard id="paused" title="Paused" value={summary.byHealth.paused} />
            <CountCard
              id="generation-applied"
              title="Latest generation applied"
              value={summary.inSync}
              of={summary.clusters}
            />
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
      <PageSection>
        <Grid hasGutter>
          <GridItem lg={8}>
            <FleetHistoryCard />
          </GridItem>
          <GridItem lg={4}>
            <NeedsAttentionCard />
          </GridItem>
        </Grid>
      </PageSection>
    </>
  );
}

function FleetHistoryCard() {
  const [range, setRange] = useState<HistoryRange>('24h');
  const window = useMemo(() => historyWindow(range, 3600), [range]);
  const history = useQuery(FleetHealthHistoryDocument, { from: window.from, to: window.to });
  return (
    <Card>
      <CardHeader
        actions={{
          actions: <RangeToggle value={range} onChange={setRange} label="Fleet history range" />,
          hasNoOffset: true,
        }}
      >
        <CardTitle component="h2">Health over time</CardTitle>
      </CardHeader>
      <CardBody>
        {history.error ? (
          <Alert variant="danger" isInline title="The fleet's history could not be loaded">
            {history.error.message}
          </Alert>
        ) : !history.data ? (
          <Skeleton height="240px" screenreaderText="Loading the fleet's history" />
        ) : (
          <Suspense fallback={<Skeleton height="240px" screenreaderText="Loading the chart" />}>
            <FleetHealthChart points={history.data.fleetHealthHistory} hours={RANGE_HOURS[range]} />
          </Suspense>
        )}
      </CardBody>
    </Card>
  );
}

const attentionReason = (c: AttentionClusterFragment, kind: string): string => {
  if (kind === 'stale') return 'no recent report';
  const type = kind === 'drifted' ? 'Drifted' : 'Degraded';
  const cond = c.status.conditions.find((x) => x.type === type && x.status === 'True');
  return cond ? `${cond.reason}${cond.message ? `: ${cond.message}` : ''}` : kind;
};

/** Degraded, stale and drifted clusters and rollouts waiting for approval, each linked. */
function NeedsAttentionCard() {
  const query = useQuery(NeedsAttentionDocument, {});
  const data = query.data;
  const groups = data
    ? ([
        ['degraded', 'Degraded', data.degraded],
        ['stale', 'Stale', data.stale],
        ['drifted', 'Drifted', data.drifted],
      ] as const)
    : [];
  const empty =
    data && groups.every(([, , g]) => g.totalCount === 0) && data.waiting.totalCount === 0;
  return (
    <Card data-testid="needs-attention">
      <CardTitle component="h2">Needs attention</CardTitle>
      <CardBody>
        {query.error ? (
          <Alert variant="danger" isInline title="Could not be loaded">
            {query.error.message}
          </Alert>
        ) : !data ? (
          <Skeleton height="120px" screenreaderText="Loading what needs attention" />
        ) : empty ? (
          <Content component="p">
            Nothing: no cluster degraded, stale or drifted, no rollout waiting.
          </Content>
        ) : (
          <>
            {groups.map(([kind, title, group]) =>
              group.totalCount ? (
                <section key={kind} data-testid={`attention-${kind}`} className="fleet-gap-bottom">
                  <Title headingLevel="h3" size="md">
                    {title} ({group.totalCount}
                    {group.totalCountIsExact ? '' : '+'})
                  </Title>
                  <List isPlain>
                    {group.nodes.map((c) => (
                      <ListItem key={c.id}>
                        <Link to={`/clusters/${encodeURIComponent(c.id)}`}>{c.name}</Link>{' '}
                        <StateLabel cluster={c} />{' '}
                        <span className="fleet-muted">
                          {attentionReason(c, kind)}
                          {kind === 'stale' ? (
                            <>
                              {' '}
                              (last report <When at={c.status.lastReportAt} />)
                            </>
                          ) : null}
                        </span>
                      </ListItem>
                    ))}
                  </List>
                </section>
              ) : null,
            )}
            {data.waiting.totalCount ? (
              <section data-testid="attention-rollouts">
                <Title headingLevel="h3" size="md">
                  Rollouts waiting for approval ({data.waiting.totalCount})
                </Title>
                <List isPlain>
                  {data.waiting.nodes.map((r) => (
                    <ListItem key={r.id}>
                      <Link to={`/rollouts/${encodeURIComponent(r.id)}`}>
                        {r.selector || 'all clusters'}
                      </Link>{' '}
                      <span className="fleet-muted">
                        after wave {r.waitingStage ?? '?'}, by {r.createdBy},{' '}
                        <When at={r.createdAt} />
                      </span>
                    </ListItem>
                  ))}
                </List>
              </section>
            ) : null}
          </>
        )}
      </CardBody>
    </Card>
  );
}

import {
  Alert,
  Card,
  CardBody,
  CardHeader,
  CardTitle,
  Content,
  Grid,
  GridItem,
  Label,
  Skeleton,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { lazy, Suspense, useMemo, useState } from 'react';
import { ClusterActivityDocument, ClusterHistoryDocument } from '../graphql/generated.js';
import { useQuery } from '../lib/hooks.js';
import { When } from './StateLabel.js';
import { RangeToggle } from './RangeToggle.js';
import { CLUSTER_STEP, historyWindow, type HistoryRange } from './charts/ranges.js';

const ClusterHistoryCharts = lazy(() =>
  import('./charts/HistoryCharts.js').then((m) => ({ default: m.ClusterHistoryCharts })),
);

/** A cluster's history charts (conditions, nodes, CSR decisions), 24 h or 7 d. */
export function ClusterHistoryCard({ id }: { id: string }) {
  const [range, setRange] = useState<HistoryRange>('24h');
  const window = useMemo(() => historyWindow(range, CLUSTER_STEP[range]), [range]);
  const query = useQuery(ClusterHistoryDocument, {
    id,
    from: window.from,
    to: window.to,
    step: window.step,
  });
  const cluster = query.data?.cluster;
  return (
    <Card>
      <CardHeader
        actions={{
          actions: <RangeToggle value={range} onChange={setRange} label="Cluster history range" />,
          hasNoOffset: true,
        }}
      >
        <CardTitle component="h2">Over time</CardTitle>
      </CardHeader>
      <CardBody>
        {query.error ? (
          <Alert variant="danger" isInline title="The cluster's history could not be loaded">
            {query.error.message}
          </Alert>
        ) : !cluster ? (
          <Skeleton height="300px" screenreaderText="Loading the cluster's history" />
        ) : (
          <Suspense fallback={<Skeleton height="300px" screenreaderText="Loading the charts" />}>
            <ClusterHistoryCharts
              from={window.fromMs}
              step={window.step}
              steps={window.steps}
              health={cluster.health}
              csr={cluster.csrDecisionHistory}
              label={range === '24h' ? 'last 24 h in 15-minute steps' : 'last 7 d in hourly steps'}
            />
          </Suspense>
        )}
      </CardBody>
    </Card>
  );
}

const DECISION_COLOR: Record<string, 'green' | 'red' | 'orange' | 'grey'> = {
  Approved: 'green',
  Denied: 'red',
  Ignored: 'orange',
};

/** Who changed what, in a line: the action and the fields it touched. */
function changed(before: unknown, after: unknown): string {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const differ = [...keys].filter(
    (k) =>
      JSON.stringify((before as Record<string, unknown> | null)?.[k]) !==
      JSON.stringify((after as Record<string, unknown> | null)?.[k]),
  );
  return differ.length ? differ.slice(0, 6).join(', ') + (differ.length > 6 ? ', …' : '') : '—';
}

/** The approver's latest CSR decisions with reasons, and the audit timeline of who changed what. */
export function ClusterActivityCards({ id }: { id: string }) {
  const query = useQuery(ClusterActivityDocument, { id });
  const cluster = query.data?.cluster;
  if (query.error) {
    return (
      <Alert variant="danger" isInline title="The cluster's activity could not be loaded">
        {query.error.message}
      </Alert>
    );
  }
  if (!cluster)
    return <Skeleton height="200px" screenreaderText="Loading the cluster's activity" />;
  return (
    <Grid hasGutter>
      <GridItem xl={6}>
        <Card data-testid="csr-decisions">
          <CardTitle component="h2">
            CSR decisions ({cluster.csrDecisions.totalCount}
            {cluster.csrDecisions.totalCount > cluster.csrDecisions.nodes.length
              ? `, latest ${cluster.csrDecisions.nodes.length}`
              : ''}
            )
          </CardTitle>
          <CardBody>
            {cluster.csrDecisions.nodes.length === 0 ? (
              <Content component="p">The approver has decided no CSR on this cluster yet.</Content>
            ) : (
              <Table aria-label="CSR decisions" variant="compact">
                <Thead>
                  <Tr>
                    <Th modifier="wrap">Node</Th>
                    <Th modifier="wrap">Decision</Th>
                    <Th modifier="wrap">Reason</Th>
                    <Th modifier="wrap">When</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {cluster.csrDecisions.nodes.map((d) => (
                    <Tr key={`${d.csrName}|${d.decidedAt}`} data-testid={`csr-${d.csrName}`}>
                      <Td dataLabel="Node">
                        {d.nodeName ?? <span className="fleet-muted">{d.csrName}</span>}
                      </Td>
                      <Td dataLabel="Decision">
                        <Label isCompact color={DECISION_COLOR[d.decision] ?? 'grey'}>
                          {d.decision}
                        </Label>
                      </Td>
                      <Td dataLabel="Reason">
                        <span title={d.message}>{d.reason}</span>
                        {d.decision !== 'Approved' && d.message ? (
                          <div className="fleet-muted">{d.message}</div>
                        ) : null}
                      </Td>
                      <Td dataLabel="When">
                        <When at={d.decidedAt} />
                      </Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
            )}
          </CardBody>
        </Card>
      </GridItem>
      <GridItem xl={6}>
        <Card data-testid="audit-timeline">
          <CardTitle component="h2">Activity ({cluster.auditEvents.totalCount})</CardTitle>
          <CardBody>
            {cluster.auditEvents.nodes.length === 0 ? (
              <Content component="p">Nobody has changed this cluster yet.</Content>
            ) : (
              <Table aria-label="Who changed what" variant="compact">
                <Thead>
                  <Tr>
                    <Th modifier="wrap">When</Th>
                    <Th modifier="wrap">Who</Th>
                    <Th modifier="wrap">What</Th>
                    <Th modifier="wrap">Fields</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {cluster.auditEvents.nodes.map((e, i) => (
                    <Tr key={`${e.at}|${i}`}>
                      <Td dataLabel="When">
                        <When at={e.at} />
                      </Td>
                      <Td dataLabel="Who">{e.actor}</Td>
                      <Td dataLabel="What">{e.action}</Td>
                      <Td dataLabel="Fields">{changed(e.before, e.after)}</Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
            )}
          </CardBody>
        </Card>
      </GridItem>
    </Grid>
  );
}

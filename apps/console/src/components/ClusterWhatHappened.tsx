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
  const claims = cluster.status.nodeClaims;
  return (
    <Grid hasGutter>
      <GridItem xl={12}>
        <Card data-testid="node-claims">
          <CardTitle component="h2">NodeClaims</CardTitle>
          <CardBody>
            {claims === null ? (
              <Content component="p">
                The sidecar has not reported NodeClaims (before its first report, or an older
                sidecar).
              </Content>
            ) : claims.length === 0 ? (
              <Content component="p">Karpenter has no NodeClaims on this cluster.</Content>
            ) : (
              <>
                <Content component="p" className="fleet-muted">
                  Launch failures first, then the newest, at most 20, as the sidecar last reported.
                </Content>
                <Table aria-label="NodeClaims" variant="compact">
                  <Thead>
                    <Tr>
                      <Th modifier="wrap">Name</Th>
                      <Th modifier="wrap">State</Th>
                      <Th modifier="wrap">Instance type</Th>
                      <Th modifier="wrap">Zone</Th>
                      <Th modifier="wrap">Capacity</Th>
                      <Th modifier="wrap">Node</Th>
                      <Th modifier="wrap">Age</Th>
                      <Th modifier="wrap">Launch failure</Th>
                    </Tr>
                  </Thead>
                  <Tbody>
                    {claims.map((c) => (
                      <Tr key={c.name} data-testid={`nodeclaim-${c.name}`}>
                        <Td dataLabel="Name">{c.name}</Td>
                        <Td dataLabel="State">
                          <Label
                            isCompact
                            color={
                              c.launchFailure
                                ? 'red'
                                : c.state === 'Ready'
                                  ? 'green'
                                  : c.state === 'Terminating'
                                    ? 'grey'
                                    : 'blue'
                            }
                          >
                            {c.launchFailure ? 'Launch failed' : c.state}
                          </Label>
                        </Td>
                        <Td dataLabel="Instance type">{c.instanceType ?? '—'}</Td>
                        <Td dataLabel="Zone">{c.zone ?? '—'}</Td>
                        <Td dataLabel="Capacity">{c.capacityType ?? '—'}</Td>
                        <Td dataLabel="Node">{c.nodeName ?? '—'}</Td>
                        <Td dataLabel="Age">
                          <When at={c.createdAt} />
                        </Td>
                        <Td dataLabel="Launch failure">
                          {c.launchFailure ? (
                            <>
                              {c.launchFailure.reason}
                              <div className="fleet-muted">{c.launchFailure.message}</div>
                            </>
                          ) : (
                            '—'
                          )}
                        </Td>
                      </Tr>
                    ))}
                  </Tbody>
                </Table>
              </>
            )}
          </CardBody>
        </Card>
      </GridItem>
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

import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  DescriptionList,
  Flex,
  Grid,
  GridItem,
  Label,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useState } from 'react';
import {
  ClusterDetailChangedDocument,
  ClusterDocument,
  PauseClusterDocument,
  ReconcileClusterDocument,
  ResumeClusterDocument,
  type ClusterDetailFragment,
} from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useMutation, useQuery, useSubscription } from '../lib/hooks.js';
import { driftFields, driftObject } from '../lib/drift.js';
import { Link } from '../lib/router.js';
import { useSession } from '../lib/session-context.js';
import { Labels, StateLabel, When } from '../components/StateLabel.js';
import { KarpenterModal } from '../components/KarpenterModal.js';
import { NodePoolEditor } from '../components/NodePoolEditor.js';
import { ConfirmModal } from '../components/ConfirmModal.js';
import { MigrationPlanCard } from '../components/MigrationPlanCard.js';
import { LiveUpdatesAlert } from '../components/LiveUpdatesAlert.js';
import { Term } from '../components/Term.js';
import { EffectiveStateCard } from '../components/EffectiveStateCard.js';
import { ClusterActivityCards, ClusterHistoryCard } from '../components/ClusterWhatHappened.js';

type Dialog =
  | { kind: 'karpenter' }
  | { kind: 'pause' }
  | { kind: 'nodepool'; nodePool: { name: string; spec: unknown } | null }
  | null;

export function ClusterPage({ id }: { id: string }) {
  const { canMutate } = useSession();
  const query = useQuery(ClusterDocument, { id });
  const replace = (cluster: ClusterDetailFragment) => query.setData(() => ({ cluster }));
  const liveError = useSubscription(ClusterDetailChangedDocument, {}, (event) => {
    if (event.clusterChanged.id === id) replace(event.clusterChanged);
  });
  const [dialog, setDialog] = useState<Dialog>(null);
  const pause = useMutation(PauseClusterDocument);
  const resume = useMutation(ResumeClusterDocument);
  const reconcile = useMutation(ReconcileClusterDocument);
  const [resent, setResent] = useState<number | null>(null);
  const cluster = query.data?.cluster;

  if (query.error && !cluster) {
    return (
      <PageSection>
        <Alert variant="danger" isInline title="The cluster could not be loaded">
          {query.error.message}
        </Alert>
      </PageSection>
    );
  }
  if (!cluster) {
    return (
      <PageSection>
        <Skeleton height="300px" screenreaderText="Loading the cluster" />
      </PageSection>
    );
  }
  const paused = cluster.karpenter.paused;
  const pauseError = pause.error ?? resume.error ?? reconcile.error;
  return (
    <>
      <PageSection>
        <Breadcrumb>
          <BreadcrumbItem>
            <Link to="/clusters">Clusters</Link>
          </BreadcrumbItem>
          <BreadcrumbItem isActive>{cluster.name}</BreadcrumbItem>
        </Breadcrumb>
        <Flex alignItems={{ default: 'alignItemsCenter' }} className="fleet-gap">
          <Title headingLevel="h1">{cluster.name}</Title>
          <StateLabel cluster={cluster} />
        </Flex>
        <LiveUpdatesAlert error={liveError} />
      </PageSection>
      <PageSection aria-label="What happened">
        <ClusterHistoryCard id={cluster.id} />
        <div className="fleet-gap">
          <ClusterActivityCards id={cluster.id} />
        </div>
      </PageSection>
      <PageSection>
        <Grid hasGutter>
          <GridItem md={6}>
            <Card>
              <CardTitle component="h2">Details</CardTitle>
              <CardBody>
                <DescriptionList isCompact isHorizontal>
                  <Term term="Platform / topology">
                    {cluster.platform} · {cluster.topology} · {cluster.region}
                  </Term>
                  <Term term="Cluster ID">{cluster.uid}</Term>
                  <Term term="Infrastructure ID">{cluster.infraID ?? '—'}</Term>
                  {cluster.platform === 'CAPI' ? (
                    <Term term="Cluster API cluster">
                      <span data-testid="capi-cluster">
                        {cluster.clusterApiNamespace}/{cluster.clusterApiName} (
                        {cluster.infrastructureProvider ?? 'aws'}
                        {cluster.managementCluster ? ` on ${cluster.managementCluster}` : ''})
                      </span>
                    </Term>
                  ) : null}
                  <Term term="Desired generation">
                    <span data-testid="generation">{cluster.karpenter.generation}</span>
                  </Term>
                  <Term term="Observed generation">
                    <span data-testid="observed-generation">
                      {cluster.status.observedGeneration}
                    </span>{' '}
                    <span className="fleet-muted" data-testid="generation-sync">
                      ({cluster.generationSync})
                    </span>{' '}
                    {cluster.inSync ? (
                      <Label color="green" isCompact>
                        in sync
                      </Label>
                    ) : (
                      <Label color="blue" isCompact>
                        {cluster.karpenter.generation - cluster.status.observedGeneration} behind
                      </Label>
                    )}
                  </Term>
                  <Term term="Last report">
                    <When at={cluster.status.lastReportAt} />
                  </Term>
                  <Term term="Labels">
                    <Labels labels={cluster.labels} />
                  </Term>
                </DescriptionList>
              </CardBody>
            </Card>
          </GridItem>
          <GridItem md={6}>
            <Card>
              <CardTitle component="h2">Karpenter</CardTitle>
              <CardBody>
                <DescriptionList isCompact isHorizontal>
                  <Term term="Karpenter">
                    <span data-testid="karpenter-enabled">
                      {cluster.karpenter.enabled ? 'Enabled' : 'Disabled'}
                    </span>
                  </Term>
                  <Term term="Cluster Autoscaler">
                    <span data-testid="cas-mode">
                      {cluster.karpenter.clusterAutoscalerMode}
                      {cluster.status.clusterAutoscaler
                        ? ` (observed: ${cluster.status.clusterAutoscaler.observed}, ${cluster.status.clusterAutoscaler.machineAutoscalers} MachineAutoscalers)`
                        : ''}
                    </span>
                  </Term>
                  <Term term="Reconciling">{paused ? 'Paused' : 'Active'}</Term>
                  <Term term="Log level">{cluster.karpenter.logLevel}</Term>
                  <Term term="Hand edits">
                    <span data-testid="drift-policy">
                      {cluster.karpenter.driftPolicy === 'REPORT'
                        ? 'Left in place and reported (REPORT)'
                        : 'Put back at once (CORRECT)'}
                    </span>
                  </Term>
                  {cluster.platform === 'CAPI' ? (
                    <Term term="Allowed instance types">
                      <span data-testid="allowed-instance-types">
                        {cluster.karpenter.allowedInstanceTypes.length
                          ? cluster.karpenter.allowedInstanceTypes.join(', ')
                          : "The worker template's type"}
                      </span>
                    </Term>
                  ) : null}
                </DescriptionList>
                {canMutate ? (
                  <Flex className="fleet-gap">
                    <Button
                      variant="primary"
                      data-mutates
                      onClick={() => setDialog({ kind: 'karpenter' })}
                    >
                      Configure Karpenter
                    </Button>
                    <Button
                      variant="secondary"
                      data-mutates
                      onClick={() =>
                        paused
                          ? void resume
                              .run({ clusterId: cluster.id })
                              .then((r) => r && replace(r.resumeCluster))
                          : setDialog({ kind: 'pause' })
                      }
                    >
                      {paused ? 'Resume reconciling' : 'Pause reconciling'}
                    </Button>
                    <Button
                      variant="secondary"
                      data-mutates
                      isLoading={reconcile.pending}
                      isDisabled={reconcile.pending}
                      onClick={() =>
                        void reconcile.run({ clusterId: cluster.id }).then((r) => {
                          if (!r) return;
                          replace(r.reconcileCluster);
                          setResent(r.reconcileCluster.karpenter.generation);
                        })
                      }
                    >
                      Reconcile now
                    </Button>
                  </Flex>
                ) : null}
                {resent !== null && !pauseError ? (
                  <Alert
                    variant="info"
                    isInline
                    isPlain
                    className="fleet-gap"
                    title={`Generation ${resent} sent again: the sidecar re-applies it even if it reports it applied.`}
                  />
                ) : null}
                {pauseError ? (
                  <Alert
                    variant="danger"
                    isInline
                    title="The API refused the change"
                    className="fleet-gap"
                  >
                    {describeRefusal(pauseError)}
                  </Alert>
                ) : null}
              </CardBody>
            </Card>
          </GridItem>
          <GridItem span={12}>
            <EffectiveStateCard cluster={cluster} canMutate={canMutate} onReset={replace} />
          </GridItem>
          <GridItem span={12}>
            <Card>
              <CardTitle component="h2">Conditions</CardTitle>
              <CardBody>
                {cluster.status.conditions.length === 0 ? (
                  <Content component="p">No report yet.</Content>
                ) : (
                  <Table aria-label="Conditions" variant="compact">
                    <Thead>
                      <Tr>
                        <Th>Type</Th>
                        <Th>Status</Th>
                        <Th>Reason</Th>
                        <Th>Message</Th>
                        <Th>Since</Th>
                      </Tr>
                    </Thead>
                    <Tbody>
                      {cluster.status.conditions.map((c) => (
                        <Tr key={c.type} data-testid={`condition-${c.type}`}>
                          <Td dataLabel="Type">{c.type}</Td>
                          <Td dataLabel="Status">{c.status}</Td>
                          <Td dataLabel="Reason">{c.reason}</Td>
                          <Td dataLabel="Message">{c.message}</Td>
                          <Td dataLabel="Since">
                            {new Date(c.lastTransitionTime).toLocaleString()}
                          </Td>
                        </Tr>
                      ))}
                    </Tbody>
                  </Table>
                )}
              </CardBody>
            </Card>
          </GridItem>
          {cluster.status.drift?.length ? (
            <GridItem span={12}>
              <Card>
                <CardTitle component="h2">
                  {cluster.status.drifted
                    ? 'Drift: hand edits of what the fleet manages'
                    : 'Drift corrected in the last hour'}
                </CardTitle>
                <CardBody>
                  <Table aria-label="Drift" variant="compact">
                    <Thead>
                      <Tr>
                        <Th modifier="wrap">Object</Th>
                        <Th modifier="wrap">Change</Th>
                        <Th modifier="wrap">Fields (by field manager)</Th>
                        <Th modifier="wrap">Detected</Th>
                        <Th modifier="wrap">Put back</Th>
                      </Tr>
                    </Thead>
                    <Tbody>
                      {cluster.status.drift.map((e) => (
                        <Tr
                          key={`${e.target}/${e.apiVersion}/${e.kind}/${e.namespace ?? ''}/${e.name}/${e.detectedAt}`}
                          data-testid={`drift-${e.kind}-${e.name}`}
                        >
                          <Td dataLabel="Object" modifier="breakWord">
                            {driftObject(e)}
                          </Td>
                          <Td dataLabel="Change">{e.change}</Td>
                          <Td dataLabel="Fields (by field manager)" modifier="breakWord">
                            {driftFields(e)}
                          </Td>
                          <Td dataLabel="Detected">{new Date(e.detectedAt).toLocaleString()}</Td>
                          <Td
                            dataLabel="Put back"
                            data-testid={`drift-corrected-${e.kind}-${e.name}`}
                          >
                            {e.correctedAt
                              ? new Date(e.correctedAt).toLocaleString()
                              : cluster.karpenter.driftPolicy === 'REPORT'
                                ? 'No: left in place (REPORT)'
                                : 'Being put back'}
                          </Td>
                        </Tr>
                      ))}
                    </Tbody>
                  </Table>
                </CardBody>
              </Card>
            </GridItem>
          ) : null}
          {cluster.status.machineConfigPools ? (
            <GridItem span={12}>
              <Card>
                <CardTitle component="h2">Karpenter MachineConfigPools</CardTitle>
                <CardBody>
                  {cluster.status.machineConfigPools.length === 0 ? (
                    <Content component="p">No NodeClass has a pool yet.</Content>
                  ) : (
                    <Table aria-label="Karpenter MachineConfigPools" variant="compact">
                      <Thead>
                        <Tr>
                          <Th modifier="wrap">NodeClass</Th>
                          <Th modifier="wrap">Pool</Th>
                          <Th modifier="wrap">Machines</Th>
                          <Th modifier="wrap">Updated</Th>
                          <Th modifier="wrap">Updating</Th>
                          <Th modifier="wrap">Degraded</Th>
                          <Th modifier="wrap">Rendered configuration</Th>
                          <Th modifier="wrap">Conditions</Th>
                        </Tr>
                      </Thead>
                      <Tbody>
                        {cluster.status.machineConfigPools.map((p) => (
                          <Tr key={p.name} data-testid={`pool-${p.name}`}>
                            <Td dataLabel="NodeClass">{p.nodeClass}</Td>
                            <Td dataLabel="Pool">{p.name}</Td>
                            <Td dataLabel="Machines">{p.machineCount}</Td>
                            <Td dataLabel="Updated">{p.updatedMachineCount}</Td>
                            <Td dataLabel="Updating">{p.updatingMachineCount}</Td>
                            <Td dataLabel="Degraded">{p.degradedMachineCount}</Td>
                            <Td dataLabel="Rendered configuration" modifier="breakWord">
                              {p.renderedConfig ?? '—'}
                            </Td>
                            <Td dataLabel="Conditions" modifier="breakWord">
                              {p.conditions
                                .filter((c) => c.status === 'True')
                                .map((c) => (c.message ? `${c.type}: ${c.message}` : c.type))
                                .join('; ') || '—'}
                            </Td>
                          </Tr>
                        ))}
                      </Tbody>
                    </Table>
                  )}
                </CardBody>
              </Card>
            </GridItem>
          ) : null}
          <GridItem span={12}>
            <MigrationPlanCard cluster={cluster} canMutate={canMutate} onApplied={replace} />
          </GridItem>
          <GridItem span={12}>
            <Card>
              <CardTitle component="h2">NodePools</CardTitle>
              <CardBody>
                {canMutate ? (
                  <Button
                    variant="secondary"
                    data-mutates
                    className="fleet-gap-bottom"
                    onClick={() => setDialog({ kind: 'nodepool', nodePool: null })}
                  >
                    Add NodePool
                  </Button>
                ) : null}
                {cluster.nodePools.length === 0 ? (
                  <Content component="p">
                    No NodePools: Karpenter launches nothing until one exists.
                  </Content>
                ) : (
                  <Table aria-label="NodePools" variant="compact">
                    <Thead>
                      <Tr>
                        <Th>Name</Th>
                        <Th>Limits</Th>
                        <Th>Updated</Th>
                        {canMutate ? <Th screenReaderText="Actions" /> : null}
                      </Tr>
                    </Thead>
                    <Tbody>
                      {cluster.nodePools.map((p) => (
                        <Tr key={p.name} data-testid={`nodepool-${p.name}`}>
                          <Td dataLabel="Name">{p.name}</Td>
                          <Td dataLabel="Limits">
                            {JSON.stringify((p.spec as { limits?: unknown } | null)?.limits ?? {})}
                          </Td>
                          <Td dataLabel="Updated">{new Date(p.updatedAt).toLocaleString()}</Td>
                          {canMutate ? (
                            <Td dataLabel="Actions">
                              <Button
                                variant="link"
                                data-mutates
                                aria-label={`Edit NodePool ${p.name}`}
                                onClick={() => setDialog({ kind: 'nodepool', nodePool: p })}
                              >
                                Edit
                              </Button>
                            </Td>
                          ) : null}
                        </Tr>
                      ))}
                    </Tbody>
                  </Table>
                )}
              </CardBody>
            </Card>
          </GridItem>
        </Grid>
      </PageSection>
      {dialog?.kind === 'karpenter' ? (
        <KarpenterModal
          cluster={cluster}
          onClose={() => setDialog(null)}
          onSaved={(c) => {
            replace(c);
            setDialog(null);
          }}
        />
      ) : null}
      {dialog?.kind === 'nodepool' ? (
        <NodePoolEditor
          cluster={cluster}
          nodePool={dialog.nodePool}
          onClose={() => setDialog(null)}
          onSaved={(c) => {
            replace(c);
            setDialog(null);
          }}
        />
      ) : null}
      {dialog?.kind === 'pause' ? (
        <ConfirmModal
          id="pause"
          title={`Pause reconciling ${cluster.name}?`}
          confirm="Pause"
          pending={pause.pending}
          error={pause.error}
          onClose={() => setDialog(null)}
          onConfirm={() =>
            void pause.run({ clusterId: cluster.id }).then((r) => {
              if (!r) return;
              replace(r.pauseCluster);
              setDialog(null);
            })
          }
        >
          The sidecar acknowledges the next order with Paused=True and changes nothing on the
          cluster until you resume: no Karpenter, NodePool or Cluster Autoscaler change reaches it,
          and objects edited on the cluster are not corrected.
        </ConfirmModal>
      ) : null}
    </>
  );
}

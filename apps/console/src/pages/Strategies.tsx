import {
  Alert,
  Card,
  CardBody,
  CardTitle,
  DescriptionList,
  EmptyState,
  EmptyStateBody,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { RolloutStrategiesDocument } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { Term } from '../components/Term.js';
import { useQuery } from '../lib/hooks.js';
import { formatStage } from '../lib/rollout-plan.js';

/**
 * Named rollout strategies, read-only: kfleet and the API write them (fleet-wide configuration,
 * docs/ROLLOUTS.md); here an SRE sees what a rollout or profile naming one will do.
 */
export function Strategies() {
  const query = useQuery(RolloutStrategiesDocument, {});
  const strategies = query.data?.rolloutStrategies;
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Rollout strategies</Title>
      </PageSection>
      <PageSection>
        {query.error ? (
          <Alert variant="danger" isInline title="Strategies could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {!strategies && !query.error ? (
          <Skeleton height="200px" screenreaderText="Loading strategies" />
        ) : null}
        {strategies && strategies.length === 0 ? (
          <EmptyState titleText="No named strategies" headingLevel="h2">
            <EmptyStateBody>
              A named strategy is a reusable list of stages with pauses, approval gates and health
              gates. Create one with <code>kfleet strategies create</code> or the
              createRolloutStrategy mutation.
            </EmptyStateBody>
          </EmptyState>
        ) : null}
        {strategies?.map((s) => (
          <Card key={s.name} className="fleet-gap" data-testid={`strategy-${s.name}`}>
            <CardTitle component="h2">{s.name}</CardTitle>
            <CardBody>
              <DescriptionList isCompact isHorizontal>
                <Term term="Failures tolerated">{s.maxFailures}</Term>
                <Term term="Wave timeout">{s.waveTimeoutSeconds} s</Term>
                <Term term="Health gates">
                  {[
                    'Degraded or Stale',
                    s.maxPendingPodSeconds != null
                      ? `unschedulable pod pending over ${s.maxPendingPodSeconds} s`
                      : null,
                    s.maxNodeClaimLaunchFailures != null
                      ? `over ${s.maxNodeClaimLaunchFailures} NodeClaim launch failures`
                      : null,
                  ]
                    .filter(Boolean)
                    .join('; ')}
                </Term>
                <Term term="Updated">
                  {new Date(s.updatedAt).toLocaleString()} (created by {s.createdBy})
                </Term>
              </DescriptionList>
              <Table aria-label={`Stages of ${s.name}`} variant="compact" className="fleet-gap">
                <Thead>
                  <Tr>
                    <Th modifier="wrap">Stage</Th>
                    <Th modifier="wrap">Clusters</Th>
                    <Th modifier="wrap">Healthy for</Th>
                    <Th modifier="wrap">Pause after</Th>
                    <Th modifier="wrap">Approval</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {s.stages.map((stage, i) => (
                    <Tr key={i}>
                      <Td dataLabel="Stage">{i + 1}</Td>
                      <Td dataLabel="Clusters">
                        {stage.selector != null
                          ? formatStage(stage)
                          : `${formatStage(stage)} (cumulative)`}
                      </Td>
                      <Td dataLabel="Healthy for">{stage.minHealthySeconds} s</Td>
                      <Td dataLabel="Pause after">
                        {stage.pauseSeconds ? `${stage.pauseSeconds} s` : '—'}
                      </Td>
                      <Td dataLabel="Approval">{stage.approval ? 'required' : '—'}</Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
            </CardBody>
          </Card>
        ))}
      </PageSection>
    </>
  );
}

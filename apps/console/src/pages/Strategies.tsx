import {
  Alert,
  Card,
  CardBody,
  CardTitle,
  EmptyState,
  EmptyStateBody,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { RolloutStrategiesDocument } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { StrategySummary } from '../components/StrategySummary.js';
import { useQuery } from '../lib/hooks.js';

/**
 * Named rollout strategies, read-only: kfleet and the API write them (fleet-wide configuration,
 * docs/ROLLOUTS.md); here an SRE sees what a rollout or profile naming one will do. The rollout
 * form offers them by name.
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
              <StrategySummary strategy={s} />
            </CardBody>
          </Card>
        ))}
      </PageSection>
    </>
  );
}

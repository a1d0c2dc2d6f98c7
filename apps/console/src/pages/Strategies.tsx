import {
  Alert,
  Button,
  Card,
  CardHeader,
  CardBody,
  CardTitle,
  EmptyState,
  EmptyStateBody,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { useState } from 'react';
import { DeleteRolloutStrategyDocument, RolloutStrategiesDocument } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { ConfirmModal } from '../components/ConfirmModal.js';
import { StrategySummary } from '../components/StrategySummary.js';
import { useMutation, useQuery } from '../lib/hooks.js';
import { useSession } from '../lib/session-context.js';

/**
 * Named rollout strategies: kfleet and the API create and update them (fleet-wide configuration,
 * docs/ROLLOUTS.md); here an SRE sees what a rollout or profile naming one will do, and an ADMIN
 * with an unscoped token may delete one. The rollout form offers them by name.
 */
export function Strategies() {
  const query = useQuery(RolloutStrategiesDocument, {});
  const strategies = query.data?.rolloutStrategies;
  const { viewer } = useSession();
  // The API deletes for ADMIN with an unscoped token only: nobody else is offered the button.
  const canDelete = viewer.role === 'ADMIN' && !viewer.scoped;
  const [deleting, setDeleting] = useState<string | null>(null);
  const remove = useMutation(DeleteRolloutStrategyDocument);
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
            <CardHeader
              actions={
                canDelete
                  ? {
                      actions: (
                        <Button
                          variant="secondary"
                          isDanger
                          data-mutates
                          aria-label={`Delete ${s.name}`}
                          onClick={() => setDeleting(s.name)}
                        >
                          Delete
                        </Button>
                      ),
                    }
                  : undefined
              }
            >
              <CardTitle component="h2">{s.name}</CardTitle>
            </CardHeader>
            <CardBody>
              <StrategySummary strategy={s} />
            </CardBody>
          </Card>
        ))}
      </PageSection>
      {deleting ? (
        <ConfirmModal
          id="delete-strategy"
          title={`Delete ${deleting}?`}
          confirm="Delete"
          danger
          pending={remove.pending}
          error={remove.error}
          onClose={() => setDeleting(null)}
          onConfirm={() =>
            void remove.run({ name: deleting }).then((r) => {
              if (!r) return;
              setDeleting(null);
              query.refetch();
            })
          }
        >
          Rollouts and profiles can no longer name it. Rollouts already started from it keep the
          copy they took at start.
        </ConfirmModal>
      ) : null}
    </>
  );
}

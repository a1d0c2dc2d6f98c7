import {
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  CodeBlock,
  CodeBlockCode,
  Content,
  Skeleton,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useEffect, useRef, useState } from 'react';
import {
  ApplyMigrationPlanDocument,
  MigrationPlanDocument,
  type ClusterDetailFragment,
} from '../graphql/generated.js';
import { useMutation, useQuery } from '../lib/hooks.js';
import { ConfirmModal } from './ConfirmModal.js';

/**
 * The sidecar's proposal for moving the cluster from the Cluster Autoscaler to Karpenter
 * (docs/DESIGN.md § migration plan), and for an operator the one step that applies it: its
 * NodePools and NodeClass overrides, Karpenter enabled, the autoscaler in MIGRATE.
 */
export function MigrationPlanCard({
  cluster,
  canMutate,
  onApplied,
}: {
  cluster: ClusterDetailFragment;
  canMutate: boolean;
  onApplied: (cluster: ClusterDetailFragment) => void;
}) {
  const query = useQuery(MigrationPlanDocument, { clusterId: cluster.id });
  const apply = useMutation(ApplyMigrationPlanDocument);
  const [confirming, setConfirming] = useState(false);
  const { refetch } = query;
  // A new desired state (or a new report) may change the proposal and the generation to send.
  const generation = cluster.karpenter.generation;
  const seen = useRef(generation);
  useEffect(() => {
    if (seen.current === generation) return;
    seen.current = generation;
    refetch();
  }, [refetch, generation]);

  const result = query.data?.migrationPlan;
  const plan = result?.plan;
  const overrides = plan ? Object.keys(plan.nodeClassOverrides ?? {}) : [];
  return (
    <Card data-testid="migration-plan">
      <CardTitle component="h2">Migration plan</CardTitle>
      <CardBody>
        {query.error && !result ? (
          <Alert variant="danger" isInline title="The migration plan could not be loaded">
            {query.error.message}
          </Alert>
        ) : !result ? (
          <Skeleton height="80px" screenreaderText="Loading the migration plan" />
        ) : !plan ? (
          <Content component="p" data-testid="migration-plan-reason">
            No migration plan: {result.reason ?? 'none proposed'}.
          </Content>
        ) : (
          <>
            <Content component="p">
              The sidecar proposes these NodePools in place of the Cluster Autoscaler&apos;s groups
              (computed {new Date(plan.computedAt).toLocaleString()}).
            </Content>
            {plan.explanations.length > 0 ? (
              <Content component="ul">
                {plan.explanations.map((e) => (
                  <Content component="li" key={e}>
                    {e}
                  </Content>
                ))}
              </Content>
            ) : null}
            <Table aria-label="Proposed NodePools" variant="compact">
              <Thead>
                <Tr>
                  <Th>NodePool</Th>
                  <Th>Replaces</Th>
                  <Th>Why</Th>
                </Tr>
              </Thead>
              <Tbody>
                {plan.nodePools.map((p) => (
                  <Tr key={p.name} data-testid={`proposed-${p.name}`}>
                    <Td dataLabel="NodePool">{p.name}</Td>
                    <Td dataLabel="Replaces">{p.replaces.join(', ')}</Td>
                    <Td dataLabel="Why">
                      <Content component="ul">
                        {p.explanations.map((e) => (
                          <Content component="li" key={e}>
                            {e}
                          </Content>
                        ))}
                      </Content>
                    </Td>
                  </Tr>
                ))}
              </Tbody>
            </Table>
            <Content component="h3" className="fleet-gap">
              NodeClass overrides
            </Content>
            {overrides.length === 0 ? (
              <Content component="p">None.</Content>
            ) : (
              <CodeBlock>
                <CodeBlockCode>{JSON.stringify(plan.nodeClassOverrides, null, 2)}</CodeBlockCode>
              </CodeBlock>
            )}
            {plan.nodeClassExplanations.length > 0 ? (
              <Content component="ul">
                {plan.nodeClassExplanations.map((e) => (
                  <Content component="li" key={e}>
                    {e}
                  </Content>
                ))}
              </Content>
            ) : null}
            <Content component="h3" className="fleet-gap">
              Not expressible in Karpenter
            </Content>
            {plan.notExpressible.length === 0 ? (
              <Content component="p">Nothing: every setting carries over.</Content>
            ) : (
              <Content component="ul" data-testid="not-expressible">
                {plan.notExpressible.map((n) => (
                  <Content component="li" key={`${n.object}:${n.what}`}>
                    {n.object}: {n.what} — {n.reason}
                  </Content>
                ))}
              </Content>
            )}
            {canMutate ? (
              <Button
                variant="primary"
                data-mutates
                className="fleet-gap"
                onClick={() => {
                  apply.reset();
                  setConfirming(true);
                }}
              >
                Apply migration plan (MIGRATE)
              </Button>
            ) : null}
          </>
        )}
      </CardBody>
      {confirming && plan && result ? (
        <ConfirmModal
          id="apply-migration"
          title={`Apply the migration plan to ${cluster.name}?`}
          confirm="Apply migration plan"
          pending={apply.pending}
          error={apply.error}
          onClose={() => setConfirming(false)}
          onConfirm={() =>
            void apply
              .run({ clusterId: cluster.id, expectedGeneration: result.generation })
              .then((r) => {
                if (!r) return;
                setConfirming(false);
                onApplied(r.applyMigrationPlan);
              })
          }
        >
          <Content component="p">As one desired-state change:</Content>
          <Content component="ol" data-testid="migration-steps">
            <Content component="li">
              NodePools created: {plan.nodePools.map((p) => p.name).join(', ') || 'none'}
              {overrides.length > 0 ? `, with the NodeClass overrides ${overrides.join(', ')}` : ''}
              .
            </Content>
            <Content component="li">Karpenter is enabled.</Content>
            <Content component="li">
              The Cluster Autoscaler is set to MIGRATE: both autoscalers run side by side.
            </Content>
          </Content>
          <Content component="p">
            Disabling the Cluster Autoscaler (DISABLE) is a later, separate step. Refused if the
            cluster&apos;s desired state moved since generation {result.generation}.
          </Content>
        </ConfirmModal>
      ) : null}
    </Card>
  );
}

import {
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  Label,
  Skeleton,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useEffect, useRef, useState } from 'react';
import {
  ClusterEffectiveStateDocument,
  ResetClusterOverrideDocument,
  type ClusterDetailFragment,
  type EffectiveStateFieldsFragment,
} from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useMutation, useQuery } from '../lib/hooks.js';
import { describeSource, fieldLabel, formatValue } from '../lib/profiles.js';
import { Link } from '../lib/router.js';
import { ConfirmModal } from './ConfirmModal.js';

const SOURCE_COLOR = { default: 'grey', override: 'orange', profile: 'blue' } as const;

/**
 * The cluster's effective desired state with provenance (docs/PROFILES.md § Effective state):
 * each field, its value and what set it, the profile values it does not take and why, and a
 * Reset of each field the cluster overrides itself, so its profiles' value applies again.
 */
export function EffectiveStateCard({
  cluster,
  canMutate,
  onReset,
}: {
  cluster: Pick<ClusterDetailFragment, 'id' | 'name' | 'karpenter'>;
  canMutate: boolean;
  onReset: (cluster: ClusterDetailFragment) => void;
}) {
  const query = useQuery(ClusterEffectiveStateDocument, { id: cluster.id });
  const reset = useMutation(ResetClusterOverrideDocument);
  // The generation the SRE saw when asking: a change in between makes the API refuse (CONFLICT)
  // rather than reset a field of a state nobody looked at.
  const [resetting, setResetting] = useState<{ field: string; generation: number } | null>(null);
  const generation = cluster.karpenter.generation;
  // The effective state moves only with the generation (a profile bound, an override set): ask
  // again when the page learns of a new one (its subscription, another dialog's save).
  const shown = query.data?.cluster.karpenter.generation;
  const { refetch } = query;
  const asked = useRef<number | null>(null);
  useEffect(() => {
    if (shown !== undefined && shown !== generation && asked.current !== generation) {
      asked.current = generation;
      refetch();
    }
  }, [shown, generation, refetch]);

  const state: EffectiveStateFieldsFragment['effectiveState'] | undefined =
    query.data?.cluster.effectiveState;
  return (
    <Card>
      <CardTitle component="h2">Effective desired state</CardTitle>
      <CardBody>
        {query.error && !state ? (
          <Alert variant="danger" isInline title="The effective state could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {!state && !query.error ? (
          <Skeleton height="120px" screenreaderText="Loading the effective state" />
        ) : null}
        {state ? (
          <>
            <Content component="p" data-testid="bound-profiles">
              {state.profiles.length === 0
                ? 'No profile is bound: the defaults, then its own overrides.'
                : 'Composed from '}
              {state.profiles.map((p, i) => (
                <span key={p.name}>
                  {i > 0 ? ', then ' : null}
                  <Link to={`/profiles/${encodeURIComponent(p.name)}`}>{p.name}</Link>@{p.revision}{' '}
                  (priority {p.priority})
                </span>
              ))}
              {state.profiles.length > 0 ? ', then its own overrides.' : null}
            </Content>
            <Table aria-label="Effective desired state" variant="compact">
              <Thead>
                <Tr>
                  <Th modifier="wrap">Field</Th>
                  <Th modifier="wrap">Value</Th>
                  <Th modifier="wrap">Source</Th>
                  {canMutate ? <Th screenReaderText="Actions" /> : null}
                </Tr>
              </Thead>
              <Tbody>
                {state.fields.map((f) => {
                  const value = formatValue(f.value);
                  const overridden = state.overrides.includes(f.field);
                  return (
                    <Tr key={f.field} data-testid={`effective-${f.field}`}>
                      <Td dataLabel="Field">{fieldLabel(f.field)}</Td>
                      <Td dataLabel="Value" modifier="breakWord">
                        <span title={value.full} data-testid={`effective-value-${f.field}`}>
                          {value.text}
                        </span>
                      </Td>
                      <Td dataLabel="Source">
                        <Label
                          isCompact
                          color={SOURCE_COLOR[f.source as keyof typeof SOURCE_COLOR] ?? 'grey'}
                          data-testid={`effective-source-${f.field}`}
                        >
                          {describeSource(f)}
                        </Label>
                      </Td>
                      {canMutate ? (
                        <Td dataLabel="Actions">
                          {overridden ? (
                            <Button
                              variant="link"
                              data-mutates
                              aria-label={`Reset the override of ${fieldLabel(f.field)}`}
                              onClick={() => {
                                reset.reset();
                                setResetting({ field: f.field, generation });
                              }}
                            >
                              Reset
                            </Button>
                          ) : null}
                        </Td>
                      ) : null}
                    </Tr>
                  );
                })}
              </Tbody>
            </Table>
            {state.ignored.length > 0 ? (
              <>
                <Content component="h3" className="fleet-gap">
                  Profile values this cluster does not take
                </Content>
                <Table aria-label="Ignored profile values" variant="compact">
                  <Thead>
                    <Tr>
                      <Th modifier="wrap">Field</Th>
                      <Th modifier="wrap">Profile</Th>
                      <Th modifier="wrap">Why</Th>
                    </Tr>
                  </Thead>
                  <Tbody>
                    {state.ignored.map((i) => (
                      <Tr key={`${i.profile}/${i.field}`} data-testid={`ignored-${i.field}`}>
                        <Td dataLabel="Field">{fieldLabel(i.field)}</Td>
                        <Td dataLabel="Profile">{i.profile}</Td>
                        <Td dataLabel="Why">{i.reason}</Td>
                      </Tr>
                    ))}
                  </Tbody>
                </Table>
              </>
            ) : null}
          </>
        ) : null}
      </CardBody>
      {resetting ? (
        <ConfirmModal
          id="reset-override"
          title={`Reset ${fieldLabel(resetting.field)} on ${cluster.name}?`}
          confirm="Reset"
          pending={reset.pending}
          error={reset.error}
          onClose={() => setResetting(null)}
          onConfirm={() =>
            void reset
              .run({
                clusterId: cluster.id,
                field: resetting.field,
                expectedGeneration: resetting.generation,
              })
              .then((r) => {
                if (!r) return;
                const { effectiveState, ...detail } = r.resetClusterOverride;
                query.setData(() => ({
                  cluster: { id: detail.id, karpenter: detail.karpenter, effectiveState },
                }));
                onReset(detail);
                setResetting(null);
              })
          }
        >
          The cluster&apos;s own value of <strong>{resetting.field}</strong> is cleared: its
          profiles&apos; value (or the default, if none sets it) applies again. That is a new
          generation of its desired state, sent to the cluster like any other change.
        </ConfirmModal>
      ) : null}
    </Card>
  );
}

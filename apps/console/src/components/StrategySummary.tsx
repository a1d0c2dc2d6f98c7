import { DescriptionList } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { RolloutStrategiesQuery } from '../graphql/generated.js';
import { Term } from './Term.js';
import { formatStage, healthGates } from '../lib/rollout-plan.js';

export type NamedStrategy = RolloutStrategiesQuery['rolloutStrategies'][number];

/**
 * What a named strategy does: its limits, health gates and stages with their pauses and approval
 * gates. The Strategies page and the rollout form (before a start) show the same thing.
 */
export function StrategySummary({ strategy: s }: { strategy: NamedStrategy }) {
  return (
    <>
      <DescriptionList isCompact isHorizontal>
        <Term term="Failures tolerated">{s.maxFailures}</Term>
        <Term term="Wave timeout">{s.waveTimeoutSeconds} s</Term>
        <Term term="Health gates">{healthGates(s)}</Term>
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
                {stage.selector != null ? formatStage(stage) : `${formatStage(stage)} (cumulative)`}
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
    </>
  );
}

import {
  Alert,
  Button,
  EmptyState,
  EmptyStateBody,
  FormSelect,
  FormSelectOption,
  PageSection,
  Skeleton,
  Title,
  Toolbar,
  ToolbarContent,
  ToolbarItem,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useState } from 'react';
import {
  RolloutChangedDocument,
  RolloutsDocument,
  type RolloutState,
  type RolloutSummaryFragment,
} from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { RolloutStateLabel } from '../components/RolloutStateLabel.js';
import { useQuery, useSubscription } from '../lib/hooks.js';
import { Link, useRouter } from '../lib/router.js';
import { useSession } from '../lib/session-context.js';
import { describeChange } from '../lib/rollout-plan.js';
import { isActive, rolloutStateText } from '../lib/rollout-state.js';

const PAGE_SIZE = 25;
const STATES: RolloutState[] = [
  'RUNNING',
  'WAITING_APPROVAL',
  'PAUSED',
  'FAILED',
  'COMPLETED',
  'ABORTED',
];

/** Rollouts, newest first; the active ones follow live. */
export function Rollouts() {
  const { canMutate } = useSession();
  const { search, navigate } = useRouter();
  const stateParam = new URLSearchParams(search).get('state');
  const state = STATES.includes(stateParam as RolloutState) ? (stateParam as RolloutState) : null;
  const [after, setAfter] = useState<string | null>(null);
  const query = useQuery(RolloutsDocument, {
    first: PAGE_SIZE,
    ...(after ? { after } : {}),
    ...(state ? { state } : {}),
  });
  const connection = query.data?.rollouts;
  const replaceRow = (row: RolloutSummaryFragment) =>
    query.setData((data) =>
      data
        ? {
            rollouts: {
              ...data.rollouts,
              nodes: data.rollouts.nodes.map((r) => (r.id === row.id ? row : r)),
            },
          }
        : data,
    );
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Rollouts</Title>
      </PageSection>
      <PageSection>
        <Toolbar>
          <ToolbarContent>
            <ToolbarItem>
              <FormSelect
                aria-label="State"
                value={state ?? ''}
                onChange={(_e, v) => {
                  setAfter(null);
                  navigate(`/rollouts${v ? `?state=${v}` : ''}`);
                }}
              >
                <FormSelectOption value="" label="Any state" />
                {STATES.map((s) => (
                  <FormSelectOption key={s} value={s} label={rolloutStateText(s)} />
                ))}
              </FormSelect>
            </ToolbarItem>
            {canMutate ? (
              <ToolbarItem>
                <Button variant="primary" data-mutates onClick={() => navigate('/rollouts/new')}>
                  Create rollout
                </Button>
              </ToolbarItem>
            ) : null}
            <ToolbarItem align={{ default: 'alignEnd' }}>
              <span data-testid="rollout-total">
                {connection
                  ? `${connection.totalCount} rollout${connection.totalCount === 1 ? '' : 's'}`
                  : ''}
              </span>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {query.error ? (
          <Alert variant="danger" isInline title="Rollouts could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {!connection && !query.error ? (
          <Skeleton height="200px" screenreaderText="Loading rollouts" />
        ) : null}
        {connection && connection.nodes.length === 0 ? (
          <EmptyState titleText="No rollouts" headingLevel="h2">
            <EmptyStateBody>
              A rollout applies one change to many clusters in waves. Start one here or from a
              selection on the clusters page.
            </EmptyStateBody>
          </EmptyState>
        ) : null}
        {connection && connection.nodes.length > 0 ? (
          <Table aria-label="Rollouts" variant="compact">
            <Thead>
              <Tr>
                <Th modifier="wrap">Change</Th>
                <Th modifier="wrap">State</Th>
                <Th modifier="wrap">Selector</Th>
                <Th modifier="wrap">Progress</Th>
                <Th modifier="wrap">Started</Th>
                <Th modifier="wrap">By</Th>
              </Tr>
            </Thead>
            <Tbody>
              {connection.nodes.map((r) => (
                <RolloutRow key={r.id} rollout={r} onChange={replaceRow} />
              ))}
            </Tbody>
          </Table>
        ) : null}
        {connection ? (
          <div className="fleet-pager">
            <Button variant="secondary" isDisabled={!after} onClick={() => setAfter(null)}>
              First page
            </Button>
            <Button
              variant="secondary"
              isDisabled={!connection.pageInfo.hasNextPage}
              onClick={() => setAfter(connection.pageInfo.endCursor)}
            >
              Next
            </Button>
          </div>
        ) : null}
      </PageSection>
    </>
  );
}

function RolloutRow({
  rollout: r,
  onChange,
}: {
  rollout: RolloutSummaryFragment;
  onChange: (r: RolloutSummaryFragment) => void;
}) {
  return (
    <Tr data-testid={`rollout-row-${r.id}`}>
      {isActive(r.state) ? <LiveRow id={r.id} onChange={onChange} /> : null}
      <Td dataLabel="Change">
        <Link to={`/rollouts/${encodeURIComponent(r.id)}`}>{describeChange(r.change)}</Link>
      </Td>
      <Td dataLabel="State">
        <RolloutStateLabel state={r.state} />
        {r.state === 'WAITING_APPROVAL' && r.waitingStage != null ? (
          <div className="fleet-muted" data-testid="rollout-waiting-stage">
            <small>before wave {r.waitingStage + 2}</small>
          </div>
        ) : null}
      </Td>
      <Td dataLabel="Selector">{r.selector || 'none'}</Td>
      <Td dataLabel="Progress">
        {r.counts.healthy} healthy, {r.counts.applying} applying, {r.counts.failed} failed of{' '}
        {r.counts.total}
        {r.counts.skipped ? ` (${r.counts.skipped} skipped)` : ''}
      </Td>
      <Td dataLabel="Started">{new Date(r.createdAt).toLocaleString()}</Td>
      <Td dataLabel="By">{r.createdBy}</Td>
    </Tr>
  );
}

/** Renders nothing: keeps an active row's subscription open while it is on screen. */
function LiveRow({ id, onChange }: { id: string; onChange: (r: RolloutSummaryFragment) => void }) {
  useSubscription(RolloutChangedDocument, { id }, (event) => onChange(event.rolloutChanged));
  return null;
}

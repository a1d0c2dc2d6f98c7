import {
  Alert,
  Button,
  Content,
  Label,
  Progress,
  ProgressMeasureLocation,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useEffect, useState } from 'react';
import {
  ApplyPlanDocument,
  ChangePlanDocument,
  PlanChangeDocument,
  type ClusterDetailFragment,
  type PlanChangeInput,
  type PlanClusterFieldsFragment,
} from '../graphql/generated.js';
import { ApiError, describeRefusal } from '../graphql/client.js';
import { useMutation } from '../lib/hooks.js';
import { useSession } from '../lib/session-context.js';

/** How long the preview waits for the sidecar's dry run before giving up, and how often it asks. */
export const PLAN_WAIT_MS = 60_000;
const POLL_MS = 500;

const ACTION_LABEL = {
  CREATED: { text: 'created', color: 'green' },
  CHANGED: { text: 'changed', color: 'blue' },
  DELETED: { text: 'deleted', color: 'red' },
  UNCHANGED: { text: 'unchanged', color: 'grey' },
} as const;

const show = (value: unknown) =>
  value === undefined || value === null ? '—' : JSON.stringify(value);

/**
 * The change the dialog would make, planned on this one cluster (docs/DESIGN.md § Plans): the
 * sidecar dry-runs it on the cluster's API server, nothing is written, and what is shown here is
 * what Apply lands (applyPlan applies this very plan, or refuses with CONFLICT if the cluster moved).
 */
export function PlanPreview({
  clusterId,
  change,
  onApplied,
  onBack,
}: {
  clusterId: string;
  /** The change without its target: the preview adds clusterId. */
  change: Omit<PlanChangeInput, 'clusterId' | 'labelSelector'>;
  onApplied: (cluster: ClusterDetailFragment) => void;
  onBack: () => void;
}) {
  const { client } = useSession();
  const key = JSON.stringify(change);
  const [planId, setPlanId] = useState<string>();
  const [entry, setEntry] = useState<PlanClusterFieldsFragment>();
  const [error, setError] = useState<ApiError>();
  const [elapsed, setElapsed] = useState(0);
  const [timedOut, setTimedOut] = useState(false);
  const apply = useMutation(ApplyPlanDocument);

  useEffect(() => {
    let stopped = false;
    const started = Date.now();
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    void (async () => {
      try {
        const created = await client.request(PlanChangeDocument, {
          input: { ...(JSON.parse(key) as typeof change), clusterId },
        });
        if (stopped) return;
        setPlanId(created.planChange.id);
        let current = created.planChange.clusters.nodes[0];
        while (!stopped && current?.state === 'PENDING') {
          if (Date.now() - started > PLAN_WAIT_MS) {
            setTimedOut(true);
            return;
          }
          setElapsed(Date.now() - started);
          await wait(POLL_MS);
          if (stopped) return;
          const polled = await client.request(ChangePlanDocument, { id: created.planChange.id });
          current = polled.changePlan.clusters.nodes[0];
        }
        if (!stopped) setEntry(current);
      } catch (err) {
        if (!stopped) {
          setError(
            err instanceof ApiError
              ? err
              : new ApiError(
                  err instanceof Error ? err.message : String(err),
                  undefined,
                  undefined,
                ),
          );
        }
      }
    })();
    return () => {
      stopped = true;
    };
  }, [client, clusterId, key]);

  const applicable =
    entry?.state === 'PLANNED' && entry.objects.every((o) => o.errors.length === 0);

  return (
    <div data-testid="plan-preview">
      {error ? (
        <Alert variant="danger" isInline title="The API refused the preview">
          {describeRefusal(error)}
        </Alert>
      ) : timedOut ? (
        <Alert variant="warning" isInline title="No answer from the cluster">
          The sidecar did not report its dry run within {PLAN_WAIT_MS / 1000} s. Go back and try
          again, or save directly.
        </Alert>
      ) : !entry ? (
        <Progress
          aria-label="Waiting for the cluster's dry run"
          title="The cluster's API server is dry-running the change…"
          value={Math.min(100, (elapsed / PLAN_WAIT_MS) * 100)}
          measureLocation={ProgressMeasureLocation.none}
          data-testid="plan-progress"
        />
      ) : (
        <PlanEntry entry={entry} />
      )}
      {apply.error ? (
        <Alert variant="danger" isInline title="The API refused the change" className="fleet-gap">
          {describeRefusal(apply.error)}
        </Alert>
      ) : null}
      <div className="fleet-gap">
        <Button
          variant="primary"
          data-mutates
          isDisabled={!planId || !applicable || apply.pending}
          isLoading={apply.pending}
          onClick={() =>
            void apply.run({ id: planId! }).then((r) => {
              const applied = r?.applyPlan.find((c) => c.id === clusterId);
              if (applied) onApplied(applied);
            })
          }
        >
          Apply this plan
        </Button>{' '}
        <Button variant="secondary" onClick={onBack}>
          Back
        </Button>
      </div>
    </div>
  );
}

function PlanEntry({ entry }: { entry: PlanClusterFieldsFragment }) {
  if (entry.state === 'NOT_PLANNED' || entry.state === 'FAILED') {
    return (
      <Alert
        variant="warning"
        isInline
        title={`${entry.state === 'FAILED' ? 'FAILED' : 'NOT_PLANNED'}: ${entry.reason ?? 'no reason given'}`}
        data-testid="plan-not-planned"
      >
        {entry.message ?? null}
      </Alert>
    );
  }
  if (entry.objects.length === 0) {
    return <Content component="p">Nothing on the cluster would change.</Content>;
  }
  // Unchanged objects are named in one line; the others are shown field by field.
  const unchanged = entry.objects.filter((o) => o.action === 'UNCHANGED' && o.errors.length === 0);
  const shown = entry.objects.filter((o) => !unchanged.includes(o));
  return (
    <>
      <Content component="p" data-testid="plan-state">
        {entry.state} against desired generation {entry.generation}: what the cluster&apos;s API
        server would store (defaults and admission included); nothing has been written.
      </Content>
      {shown.length === 0 ? (
        <Content component="p">Nothing on the cluster would change.</Content>
      ) : null}
      {shown.map((o) => {
        const label = ACTION_LABEL[o.action];
        const id = `${o.target}-${o.kind}-${o.namespace ?? ''}-${o.name}`;
        return (
          <section
            key={id}
            className="fleet-gap"
            data-testid={`planned-${o.kind}-${o.name}`}
            aria-label={`${o.kind} ${o.name}`}
          >
            <Content component="h3">
              {o.kind} {o.namespace ? `${o.namespace}/` : ''}
              {o.name} <Label color={label.color}>{label.text}</Label>
              {o.target !== 'workload' ? <Label isCompact>{o.target}</Label> : null}
            </Content>
            {o.errors.length > 0 ? (
              <Alert variant="danger" isInline title="The API server refused it">
                <Content component="ul">
                  {o.errors.map((e) => (
                    <Content component="li" key={`${e.field}:${e.message}`}>
                      {e.field ? <code>{e.field}</code> : null}
                      {e.field ? ': ' : null}
                      {e.message}
                    </Content>
                  ))}
                </Content>
              </Alert>
            ) : null}
            {o.action === 'CHANGED' || o.action === 'CREATED' ? (
              <Table aria-label={`Fields of ${o.kind} ${o.name}`} variant="compact">
                <Thead>
                  <Tr>
                    <Th>Field</Th>
                    <Th>Before</Th>
                    <Th>After</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {o.diff.map((d) => (
                    <Tr key={d.path}>
                      <Td dataLabel="Field">
                        <code>{d.path}</code>
                      </Td>
                      <Td dataLabel="Before">
                        <code>{show(d.before)}</code>
                      </Td>
                      <Td dataLabel="After">
                        <code>{show(d.after)}</code>
                      </Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
            ) : null}
            {o.moreFields > 0 ? (
              <Content component="small">and {o.moreFields} more fields</Content>
            ) : null}
          </section>
        );
      })}
      {unchanged.length > 0 ? (
        <Content component="p" className="fleet-gap" data-testid="plan-unchanged">
          Unchanged ({unchanged.length}): {unchanged.map((o) => `${o.kind}/${o.name}`).join(', ')}
        </Content>
      ) : null}
    </>
  );
}

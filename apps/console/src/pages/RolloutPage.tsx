import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Card,
  CardBody,
  CardTitle,
  DescriptionList,
  Flex,
  FormGroup,
  Gallery,
  PageSection,
  Skeleton,
  TextInput,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useState } from 'react';
import {
  AbortRolloutDocument,
  ApproveRolloutStageDocument,
  PauseRolloutDocument,
  ResumeRolloutDocument,
  RolloutChangedDocument,
  RolloutDocument,
  type RolloutDetailFragment,
} from '../graphql/generated.js';
import { ConfirmModal } from '../components/ConfirmModal.js';
import { LiveUpdatesAlert } from '../components/LiveUpdatesAlert.js';
import { RolloutClusterLabel, RolloutStateLabel } from '../components/RolloutStateLabel.js';
import { CountCard } from '../components/SummaryCards.js';
import { Term } from '../components/Term.js';
import { useMutation, useQuery, useSubscription } from '../lib/hooks.js';
import { Link } from '../lib/router.js';
import { useSession } from '../lib/session-context.js';
import { describeChange, formatWaveSteps, type WaveStep } from '../lib/rollout-plan.js';
import { rolloutActions, waitingForApproval } from '../lib/rollout-state.js';

/**
 * The open confirmation. Approve keeps the stage it was opened for: if the rollout moves on while
 * the dialog is open (paused elsewhere, say), the API is asked about that stage and its refusal is
 * shown, rather than approving whatever waits by then.
 */
type Dialog = 'pause' | 'resume' | 'abort' | { approve: number } | null;

const when = (at: string | null) => (at ? new Date(at).toLocaleString() : '—');

/** One rollout, followed live through rolloutChanged, with pause / resume / abort confirmed. */
export function RolloutPage({ id }: { id: string }) {
  const { canMutate } = useSession();
  const query = useQuery(RolloutDocument, { id });
  const replace = (rollout: RolloutDetailFragment) => query.setData(() => ({ rollout }));
  const liveError = useSubscription(RolloutChangedDocument, { id }, (event) =>
    replace(event.rolloutChanged),
  );
  const [dialog, setDialog] = useState<Dialog>(null);
  const [reason, setReason] = useState('');
  const pause = useMutation(PauseRolloutDocument);
  const resume = useMutation(ResumeRolloutDocument);
  const abort = useMutation(AbortRolloutDocument);
  const approve = useMutation(ApproveRolloutStageDocument);
  const rollout = query.data?.rollout;

  if (query.error && !rollout) {
    return (
      <PageSection>
        <Alert variant="danger" isInline title="The rollout could not be loaded">
          {query.error.message}
        </Alert>
      </PageSection>
    );
  }
  if (!rollout) {
    return (
      <PageSection>
        <Skeleton height="300px" screenreaderText="Loading the rollout" />
      </PageSection>
    );
  }
  const actions = rolloutActions(rollout.state);
  const close = () => {
    setDialog(null);
    pause.reset();
    resume.reset();
    abort.reset();
    approve.reset();
  };
  const done = (r: RolloutDetailFragment | undefined) => {
    if (!r) return;
    replace(r);
    setDialog(null);
  };
  const steps = (rollout.strategy.waves ?? []) as WaveStep[];
  const waiting =
    rollout.state === 'WAITING_APPROVAL' && rollout.waitingStage != null
      ? { stage: rollout.waitingStage }
      : null;
  return (
    <>
      <PageSection>
        <Breadcrumb>
          <BreadcrumbItem>
            <Link to="/rollouts">Rollouts</Link>
          </BreadcrumbItem>
          <BreadcrumbItem isActive>{describeChange(rollout.change)}</BreadcrumbItem>
        </Breadcrumb>
        <Flex alignItems={{ default: 'alignItemsCenter' }} className="fleet-gap">
          <Title headingLevel="h1">Rollout: {describeChange(rollout.change)}</Title>
          <RolloutStateLabel state={rollout.state} />
        </Flex>
        {/* While waiting, the alert below says it with the console's wave numbers (from 1); the
            API's reason counts from 0, as approveRolloutStage's stage does. */}
        {rollout.reason && !waiting ? (
          <Alert
            variant={rollout.state === 'FAILED' ? 'danger' : 'info'}
            isInline
            isPlain
            title={rollout.reason}
            className="fleet-gap"
            data-testid="rollout-reason"
          />
        ) : null}
        {waiting ? (
          <Alert
            variant="warning"
            isInline
            title={waitingForApproval(waiting.stage)}
            className="fleet-gap"
            data-testid="rollout-waiting-approval"
          >
            Wave {waiting.stage + 1} (stage {waiting.stage} to the API and kfleet) is healthy and
            has an approval gate. Health is still judged, but no further cluster is changed until an
            OPERATOR (or ADMIN) approves.
          </Alert>
        ) : null}
        <LiveUpdatesAlert error={liveError} />
        {canMutate && (actions.pause || actions.resume || actions.abort || actions.approve) ? (
          <Flex className="fleet-gap">
            {actions.approve && waiting ? (
              <Button
                variant="primary"
                data-mutates
                onClick={() => setDialog({ approve: waiting.stage })}
              >
                Approve
              </Button>
            ) : null}
            {actions.pause ? (
              <Button variant="secondary" data-mutates onClick={() => setDialog('pause')}>
                Pause rollout
              </Button>
            ) : null}
            {actions.resume ? (
              <Button variant="primary" data-mutates onClick={() => setDialog('resume')}>
                Resume rollout
              </Button>
            ) : null}
            {actions.abort ? (
              <Button variant="danger" data-mutates onClick={() => setDialog('abort')}>
                Abort rollout
              </Button>
            ) : null}
          </Flex>
        ) : null}
      </PageSection>
      <PageSection>
        <Gallery hasGutter minWidths={{ default: '140px' }}>
          <CountCard id="total" title="Clusters" value={rollout.counts.total} />
          <CountCard id="pending" title="Pending" value={rollout.counts.pending} />
          <CountCard id="applying" title="Applying" value={rollout.counts.applying} />
          <CountCard id="healthy" title="Healthy" value={rollout.counts.healthy} />
          <CountCard id="failed" title="Failed" value={rollout.counts.failed} />
          <CountCard id="skipped" title="Skipped" value={rollout.counts.skipped} />
        </Gallery>
        <Card className="fleet-gap">
          <CardTitle component="h2">Details</CardTitle>
          <CardBody>
            <DescriptionList isCompact isHorizontal>
              <Term term="Change">{describeChange(rollout.change)}</Term>
              <Term term="Selector">{rollout.selector || 'none (no label requirement)'}</Term>
              <Term term="Started">
                {when(rollout.createdAt)} by {rollout.createdBy}
              </Term>
              <Term term="Finished">{when(rollout.finishedAt)}</Term>
              {rollout.strategy.name ? <Term term="Strategy">{rollout.strategy.name}</Term> : null}
              <Term term="Waves">{formatWaveSteps(steps)}</Term>
              <Term term="Healthy for">
                {/* A named strategy's stages each carry their own; an inline one has one. */}
                {rollout.strategy.name
                  ? `${rollout.waves.map((w) => `${w.minHealthySeconds} s`).join(', ')} per cluster, by wave`
                  : `${rollout.strategy.minHealthySeconds} s per cluster`}
              </Term>
              <Term term="Failures tolerated">{rollout.strategy.maxFailures}</Term>
              <Term term="Wave timeout">{rollout.strategy.waveTimeoutSeconds} s</Term>
            </DescriptionList>
          </CardBody>
        </Card>
        {rollout.waves.map((wave) => (
          <Card key={wave.index} className="fleet-gap" data-testid={`wave-${wave.index}`}>
            <CardTitle component="h2">
              Wave {wave.index + 1}: {wave.state.toLowerCase()}
              {wave.index === rollout.currentWave && rollout.state === 'RUNNING'
                ? ' (current)'
                : ''}
            </CardTitle>
            {wave.approval || wave.pauseSeconds ? (
              <CardBody data-testid={`wave-${wave.index}-gates`}>
                {wave.pauseSeconds ? (
                  <div>
                    Pause {wave.pauseSeconds} s once healthy
                    {wave.resumeAt ? `, until ${when(wave.resumeAt)}` : ''}.
                  </div>
                ) : null}
                {wave.approval ? (
                  <div>
                    Approval gate:{' '}
                    {wave.approvedBy
                      ? `approved by ${wave.approvedBy} at ${when(wave.approvedAt)}`
                      : rollout.waitingStage === wave.index
                        ? 'waiting'
                        : 'not reached'}
                    .
                  </div>
                ) : null}
              </CardBody>
            ) : null}
            <CardBody>
              <Table aria-label={`Wave ${wave.index + 1} clusters`} variant="compact">
                <Thead>
                  <Tr>
                    <Th>Cluster</Th>
                    <Th>State</Th>
                    <Th>Generation</Th>
                    <Th>Applied</Th>
                    <Th>Reason</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {wave.clusters.map((c) => (
                    <Tr key={c.clusterId} data-testid={`rollout-cluster-${c.clusterName}`}>
                      <Td dataLabel="Cluster">
                        <Link to={`/clusters/${encodeURIComponent(c.clusterId)}`}>
                          {c.clusterName}
                        </Link>
                      </Td>
                      <Td dataLabel="State">
                        <RolloutClusterLabel state={c.state} />
                      </Td>
                      <Td dataLabel="Generation">{c.generation ?? '—'}</Td>
                      <Td dataLabel="Applied">{when(c.appliedAt)}</Td>
                      <Td dataLabel="Reason">{c.reason ?? '—'}</Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
              {wave.deadlineAt && wave.state === 'RUNNING' ? (
                <small className="fleet-muted">Deadline {when(wave.deadlineAt)}</small>
              ) : null}
            </CardBody>
          </Card>
        ))}
      </PageSection>
      {dialog === 'pause' ? (
        <ConfirmModal
          id="pause-rollout"
          title="Pause this rollout?"
          confirm="Pause"
          pending={pause.pending}
          error={pause.error}
          onClose={close}
          onConfirm={() => void pause.run({ id }).then((r) => done(r?.pauseRollout))}
        >
          No further cluster is changed and health is not judged until you resume. Clusters already
          changed keep the change and go on reconciling it.
        </ConfirmModal>
      ) : null}
      {dialog === 'resume' ? (
        <ConfirmModal
          id="resume-rollout"
          title="Resume this rollout?"
          confirm="Resume"
          pending={resume.pending}
          error={resume.error}
          onClose={close}
          onConfirm={() => void resume.run({ id }).then((r) => done(r?.resumeRollout))}
        >
          Waves advance again on your token&apos;s authority (and scope). Failed clusters are
          watched again, not re-applied, and the current wave gets a fresh deadline of{' '}
          {rollout.strategy.waveTimeoutSeconds} s.
        </ConfirmModal>
      ) : null}
      {typeof dialog === 'object' && dialog ? (
        <ConfirmModal
          id="approve-stage"
          title={`Approve wave ${dialog.approve + 2}?`}
          confirm="Approve"
          pending={approve.pending}
          error={approve.error}
          onClose={close}
          onConfirm={() =>
            void approve
              .run({ id, stage: dialog.approve })
              .then((r) => done(r?.approveRolloutStage))
          }
        >
          Wave {dialog.approve + 1} is healthy. Approving its gate (stage {dialog.approve} in the
          API and kfleet) starts wave {dialog.approve + 2}: its clusters are changed on the
          authority of the rollout&apos;s starter, {rollout.createdBy}. Your approval is recorded
          and audited.
        </ConfirmModal>
      ) : null}
      {dialog === 'abort' ? (
        <ConfirmModal
          id="abort-rollout"
          title="Abort this rollout?"
          confirm="Abort"
          danger
          pending={abort.pending}
          error={abort.error}
          onClose={close}
          onConfirm={() =>
            void abort
              .run({ id, ...(reason.trim() ? { reason: reason.trim() } : {}) })
              .then((r) => done(r?.abortRollout))
          }
        >
          <p>
            The rollout stops for good. The {rollout.counts.pending} cluster
            {rollout.counts.pending === 1 ? '' : 's'} not reached yet are skipped; the{' '}
            {rollout.counts.total - rollout.counts.pending - rollout.counts.skipped} already changed
            keep the change: nothing is reverted. To undo it, start a rollout of the opposite
            change.
          </p>
          <FormGroup label="Reason (optional)" fieldId="abort-reason" className="fleet-gap">
            <TextInput id="abort-reason" value={reason} onChange={(_e, v) => setReason(v)} />
          </FormGroup>
        </ConfirmModal>
      ) : null}
    </>
  );
}

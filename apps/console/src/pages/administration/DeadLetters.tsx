import {
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  EmptyState,
  EmptyStateBody,
  Skeleton,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useState } from 'react';
import {
  DeadLettersDocument,
  RedriveAllDeadLettersDocument,
  RedriveDeadLetterDocument,
} from '../../graphql/generated.js';
import { describeRefusal } from '../../graphql/client.js';
import { ConfirmModal } from '../../components/ConfirmModal.js';
import { useMutation, useQuery } from '../../lib/hooks.js';

const DEAD_LETTER_PAGE = 25;

export function DeadLetters() {
  const [after, setAfter] = useState<string | null>(null);
  const query = useQuery(DeadLettersDocument, {
    first: DEAD_LETTER_PAGE,
    ...(after ? { after } : {}),
  });
  const redrive = useMutation(RedriveDeadLetterDocument);
  const redriveAll = useMutation(RedriveAllDeadLettersDocument);
  const [confirmAll, setConfirmAll] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const connection = query.data?.deadLetters;
  const error = redrive.error;
  return (
    <Card className="fleet-gap">
      <CardTitle component="h2">Dead letters</CardTitle>
      <CardBody>
        <Content component="p">
          Jobs that failed every attempt. Redriving puts a job back on its queue as it was; fix the
          cause first (its reason says what it was).
        </Content>
        {query.error ? (
          <Alert variant="danger" isInline title="Dead letters could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {error ? (
          <Alert variant="danger" isInline title="The API refused the redrive">
            {describeRefusal(error)}
          </Alert>
        ) : null}
        {done ? <Alert variant="success" isInline isPlain title={done} /> : null}
        {!connection && !query.error ? (
          <Skeleton height="80px" screenreaderText="Loading dead letters" />
        ) : null}
        {connection && connection.totalCount === 0 ? (
          <EmptyState titleText="No dead letters" headingLevel="h3">
            <EmptyStateBody>Every job so far succeeded or is still being retried.</EmptyStateBody>
          </EmptyState>
        ) : null}
        {connection && connection.totalCount > 0 ? (
          <>
            <Button
              variant="secondary"
              data-mutates
              className="fleet-gap-bottom fleet-gap"
              onClick={() => {
                redriveAll.reset();
                setConfirmAll(true);
              }}
            >
              Redrive all ({connection.totalCount})
            </Button>
            <Table aria-label="Dead letters" variant="compact">
              <Thead>
                <Tr>
                  <Th>Queue</Th>
                  <Th>Job</Th>
                  <Th>Failed</Th>
                  <Th>Attempts</Th>
                  <Th>Reason</Th>
                  <Th screenReaderText="Actions" />
                </Tr>
              </Thead>
              <Tbody>
                {connection.nodes.map((d) => (
                  <Tr key={d.id} data-testid={`dead-letter-${d.jobId}`}>
                    <Td dataLabel="Queue">{d.queue}</Td>
                    <Td dataLabel="Job">
                      {d.name} ({d.jobId})
                    </Td>
                    <Td dataLabel="Failed">{new Date(d.failedAt).toLocaleString()}</Td>
                    <Td dataLabel="Attempts">
                      {d.attemptsMade} / {d.attempts}
                    </Td>
                    <Td dataLabel="Reason" modifier="breakWord">
                      {d.failedReason}
                    </Td>
                    <Td dataLabel="Actions">
                      <Button
                        variant="link"
                        data-mutates
                        aria-label={`Redrive job ${d.jobId}`}
                        isDisabled={redrive.pending}
                        onClick={() =>
                          void redrive.run({ id: d.id }).then((r) => {
                            if (!r) return;
                            setDone(`Job ${d.jobId} is back on ${d.queue}.`);
                            query.refetch();
                          })
                        }
                      >
                        Redrive
                      </Button>
                    </Td>
                  </Tr>
                ))}
              </Tbody>
            </Table>
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
          </>
        ) : null}
      </CardBody>
      {confirmAll && connection ? (
        <ConfirmModal
          id="redrive-all"
          title={`Redrive all ${connection.totalCount} dead letters?`}
          confirm="Redrive all"
          pending={redriveAll.pending}
          error={redriveAll.error}
          onClose={() => setConfirmAll(false)}
          onConfirm={() =>
            void redriveAll.run({}).then((r) => {
              if (r === undefined) return;
              setDone(`${r.redriveAllDeadLetters} jobs are back on their queues.`);
              setConfirmAll(false);
              setAfter(null);
              query.refetch();
            })
          }
        >
          Every dead-lettered job goes back on its queue and is tried again.
        </ConfirmModal>
      ) : null}
    </Card>
  );
}

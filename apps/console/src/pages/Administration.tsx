import {
  ActionGroup,
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  EmptyState,
  EmptyStateBody,
  Form,
  FormGroup,
  FormSelect,
  FormSelectOption,
  Grid,
  GridItem,
  Label,
  PageSection,
  Skeleton,
  TextInput,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useState } from 'react';
import {
  ApiTokensDocument,
  CreateApiTokenDocument,
  DeadLettersDocument,
  RedriveAllDeadLettersDocument,
  RedriveDeadLetterDocument,
  RegisterClusterDocument,
  RevokeApiTokenDocument,
  type ApiTokenFieldsFragment,
  type Platform,
  type Role,
  type Topology,
} from '../graphql/generated.js';
import { describeRefusal, type ApiError } from '../graphql/client.js';
import { ConfirmModal } from '../components/ConfirmModal.js';
import { FieldError } from '../components/FieldError.js';
import { ShownOnce } from '../components/ShownOnce.js';
import { useMutation, useQuery } from '../lib/hooks.js';
import { Link } from '../lib/router.js';
import { useSession } from '../lib/session-context.js';
import {
  CLUSTER_API_PROVIDERS,
  EXPIRY_CHOICES,
  OPENSHIFT_CLUSTER_API_NAMESPACE,
  expiresAt,
  registrationFields,
  registrationInput,
  tokenStatus,
  type RegistrationForm,
} from '../lib/admin-forms.js';

/** Tokens, registrations and dead letters: ADMIN only (the API refuses anyone else). */
export function Administration() {
  const { viewer } = useSession();
  if (viewer.role !== 'ADMIN') {
    return (
      <PageSection>
        <Title headingLevel="h1">Administration</Title>
        <Alert
          variant="info"
          isInline
          title="Administration needs the ADMIN role"
          className="fleet-gap"
        >
          Your token is {viewer.role}. <Link to="/">Back to the overview</Link>
        </Alert>
      </PageSection>
    );
  }
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Administration</Title>
      </PageSection>
      <PageSection>
        <ApiTokens />
        <RegisterCluster />
        <DeadLetters />
      </PageSection>
    </>
  );
}

/** The API's refusal at the form field it names (`input.<name>`), or null when it names none. */
const fieldMessage = (error: ApiError | undefined, field: string) =>
  error?.field === field || error?.field?.startsWith(`${field}.`)
    ? describeRefusal(error)
    : undefined;

function ApiTokens() {
  const query = useQuery(ApiTokensDocument, {});
  const create = useMutation(CreateApiTokenDocument);
  const revoke = useMutation(RevokeApiTokenDocument);
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('VIEWER');
  const [scope, setScope] = useState('');
  const [expiry, setExpiry] = useState('30');
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiTokenFieldsFragment | null>(null);
  const now = new Date();

  const submit = async () => {
    const result = await create.run({
      input: {
        name: name.trim(),
        role,
        ...(scope.trim() ? { labelSelector: scope.trim() } : {}),
        expiresAt: expiresAt(expiry, new Date()),
      },
    });
    if (!result) return;
    setSecret({ name: result.createApiToken.token.name, value: result.createApiToken.secret });
    setName('');
    setScope('');
    query.setData((data) =>
      data ? { apiTokens: [...data.apiTokens, result.createApiToken.token] } : data,
    );
  };
  const tokens = query.data?.apiTokens;
  const errors = {
    name: fieldMessage(create.error, 'input.name'),
    role: fieldMessage(create.error, 'input.role'),
    scope: fieldMessage(create.error, 'input.labelSelector'),
    expiry: fieldMessage(create.error, 'input.expiresAt'),
  };
  const other = create.error && !Object.values(errors).some(Boolean) ? create.error : undefined;
  return (
    <Card>
      <CardTitle component="h2">API tokens</CardTitle>
      <CardBody>
        <Form
          className="fleet-gap-bottom"
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <Grid hasGutter>
            <GridItem md={3}>
              <FormGroup label="Name" isRequired fieldId="token-name">
                <TextInput
                  id="token-name"
                  isRequired
                  value={name}
                  validated={errors.name ? 'error' : 'default'}
                  onChange={(_e, v) => setName(v)}
                />
                <FieldError id="token-name-error" message={errors.name} />
              </FormGroup>
            </GridItem>
            <GridItem md={2}>
              <FormGroup label="Role" fieldId="token-role">
                <FormSelect id="token-role" value={role} onChange={(_e, v) => setRole(v as Role)}>
                  <FormSelectOption value="VIEWER" label="VIEWER (reads)" />
                  <FormSelectOption value="OPERATOR" label="OPERATOR (changes clusters)" />
                  <FormSelectOption value="ADMIN" label="ADMIN (also tokens, registrations)" />
                </FormSelect>
                <FieldError id="token-role-error" message={errors.role} />
              </FormGroup>
            </GridItem>
            <GridItem md={4}>
              <FormGroup label="Scope (label selector)" fieldId="token-scope">
                <TextInput
                  id="token-scope"
                  value={scope}
                  placeholder="Empty: every cluster"
                  validated={errors.scope ? 'error' : 'default'}
                  onChange={(_e, v) => setScope(v)}
                />
                <FieldError id="token-scope-error" message={errors.scope} />
              </FormGroup>
            </GridItem>
            <GridItem md={2}>
              <FormGroup label="Expires after" fieldId="token-expiry">
                <FormSelect id="token-expiry" value={expiry} onChange={(_e, v) => setExpiry(v)}>
                  {EXPIRY_CHOICES.map((c) => (
                    <FormSelectOption key={c.value} value={c.value} label={c.label} />
                  ))}
                </FormSelect>
                <FieldError id="token-expiry-error" message={errors.expiry} />
              </FormGroup>
            </GridItem>
          </Grid>
          <ActionGroup>
            <Button
              type="submit"
              variant="primary"
              data-mutates
              isLoading={create.pending}
              isDisabled={create.pending || !name.trim()}
            >
              Create token
            </Button>
          </ActionGroup>
          {other ? (
            <Alert variant="danger" isInline title="The API refused the token">
              {describeRefusal(other)}
            </Alert>
          ) : null}
        </Form>
        {query.error ? (
          <Alert variant="danger" isInline title="Tokens could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {!tokens && !query.error ? (
          <Skeleton height="120px" screenreaderText="Loading tokens" />
        ) : null}
        {tokens ? (
          <Table aria-label="API tokens" variant="compact">
            <Thead>
              <Tr>
                <Th>Name</Th>
                <Th>Role</Th>
                <Th>Scope</Th>
                <Th>Status</Th>
                <Th>Created</Th>
                <Th>Expires</Th>
                <Th>Last used</Th>
                <Th screenReaderText="Actions" />
              </Tr>
            </Thead>
            <Tbody>
              {tokens.map((t) => {
                const status = tokenStatus(t, now);
                return (
                  <Tr key={t.id} data-testid={`token-${t.name}`}>
                    <Td dataLabel="Name">{t.name}</Td>
                    <Td dataLabel="Role">{t.role}</Td>
                    <Td dataLabel="Scope">{t.labelSelector ?? 'every cluster'}</Td>
                    <Td dataLabel="Status">
                      <Label
                        isCompact
                        color={
                          status === 'Active' ? 'green' : status === 'Revoked' ? 'red' : 'grey'
                        }
                      >
                        {status}
                      </Label>
                    </Td>
                    <Td dataLabel="Created">{new Date(t.createdAt).toLocaleString()}</Td>
                    <Td dataLabel="Expires">
                      {t.expiresAt ? new Date(t.expiresAt).toLocaleString() : 'never'}
                    </Td>
                    <Td dataLabel="Last used">
                      {t.lastUsedAt ? new Date(t.lastUsedAt).toLocaleString() : 'never'}
                    </Td>
                    <Td dataLabel="Actions">
                      {status === 'Active' ? (
                        <Button
                          variant="link"
                          isDanger
                          data-mutates
                          aria-label={`Revoke token ${t.name}`}
                          onClick={() => {
                            revoke.reset();
                            setRevoking(t);
                          }}
                        >
                          Revoke
                        </Button>
                      ) : null}
                    </Td>
                  </Tr>
                );
              })}
            </Tbody>
          </Table>
        ) : null}
      </CardBody>
      {secret ? (
        <ShownOnce
          id="token-secret"
          title={`Token ${secret.name} created`}
          what="the token"
          value={secret.value}
          onClose={() => setSecret(null)}
        />
      ) : null}
      {revoking ? (
        <ConfirmModal
          id="revoke-token"
          title={`Revoke token ${revoking.name}?`}
          confirm="Revoke"
          danger
          pending={revoke.pending}
          error={revoke.error}
          onClose={() => setRevoking(null)}
          onConfirm={() =>
            void revoke.run({ id: revoking.id }).then((r) => {
              if (!r) return;
              query.setData((data) =>
                data
                  ? {
                      apiTokens: data.apiTokens.map((t) =>
                        t.id === r.revokeApiToken.id ? r.revokeApiToken : t,
                      ),
                    }
                  : data,
              );
              setRevoking(null);
            })
          }
        >
          Every request with this token is refused from now on (within seconds), and consoles signed
          in with it are signed out. This cannot be undone.
        </ConfirmModal>
      ) : null}
    </Card>
  );
}

function RegisterCluster() {
  const register = useMutation(RegisterClusterDocument);
  const [form, setForm] = useState<RegistrationForm>({
    name: '',
    platform: 'AWS',
    topology: 'STANDALONE',
    region: '',
    infraID: '',
    labels: '',
    managementCluster: '',
    hcpNamespace: '',
    clusterApiName: '',
    clusterApiNamespace: '',
    infrastructureProvider: CLUSTER_API_PROVIDERS[0],
  });
  const set =
    <K extends keyof RegistrationForm>(key: K) =>
    (value: RegistrationForm[K]) =>
      setForm((f) => ({ ...f, [key]: value }));
  const shown = registrationFields(form);
  const [labelsError, setLabelsError] = useState<string | undefined>();
  const [manifest, setManifest] = useState<{ name: string; id: string; text: string } | null>(null);

  const submit = async () => {
    const built = registrationInput(form);
    if ('error' in built) {
      setLabelsError(built.error);
      return;
    }
    setLabelsError(undefined);
    const result = await register.run({ input: built.input });
    if (!result) return;
    const { cluster, bootstrapManifest } = result.registerCluster;
    setManifest({ name: cluster.name, id: cluster.id, text: bootstrapManifest });
    setForm((f) => ({ ...f, name: '', infraID: '', labels: '', clusterApiName: '' }));
  };
  const error = register.error;
  const errors = {
    name: fieldMessage(error, 'input.name'),
    platform: fieldMessage(error, 'input.platform'),
    topology: fieldMessage(error, 'input.topology'),
    region: fieldMessage(error, 'input.region'),
    infraID: fieldMessage(error, 'input.infraID'),
    labels: labelsError ?? fieldMessage(error, 'input.labels'),
    managementCluster: fieldMessage(error, 'input.managementCluster'),
    hcpNamespace: fieldMessage(error, 'input.hcpNamespace'),
    clusterApiName: fieldMessage(error, 'input.clusterApiName'),
    clusterApiNamespace: fieldMessage(error, 'input.clusterApiNamespace'),
    infrastructureProvider: fieldMessage(error, 'input.infrastructureProvider'),
  };
  const other =
    error && !Object.values(errors).some((m) => m === describeRefusal(error)) ? error : undefined;
  const text = (
    id: string,
    label: string,
    value: string,
    set: (v: string) => void,
    message: string | undefined,
    extra: { isRequired?: boolean; placeholder?: string } = {},
  ) => (
    <FormGroup label={label} isRequired={extra.isRequired} fieldId={id}>
      <TextInput
        id={id}
        isRequired={extra.isRequired}
        value={value}
        placeholder={extra.placeholder}
        validated={message ? 'error' : 'default'}
        aria-describedby={`${id}-error`}
        onChange={(_e, v) => set(v)}
      />
      <FieldError id={`${id}-error`} message={message} />
    </FormGroup>
  );
  return (
    <Card className="fleet-gap">
      <CardTitle component="h2">Register a cluster</CardTitle>
      <CardBody>
        <Content component="p">
          Registration issues the cluster&apos;s sidecar credentials and returns the bootstrap
          manifest that deploys the sidecar with them. It is shown once: apply it to the cluster (
          <code>oc apply -f</code>) before closing it.
        </Content>
        <Form
          className="fleet-gap"
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <Grid hasGutter>
            <GridItem md={4}>
              {text('register-name', 'Name', form.name, set('name'), errors.name, {
                isRequired: true,
              })}
            </GridItem>
            <GridItem md={2}>
              <FormGroup label="Platform" fieldId="register-platform">
                <FormSelect
                  id="register-platform"
                  value={form.platform}
                  onChange={(_e, v) => set('platform')(v as Platform)}
                >
                  <FormSelectOption value="AWS" label="AWS" />
                  <FormSelectOption value="AZURE" label="Azure" />
                  <FormSelectOption value="CAPI" label="Cluster API" />
                </FormSelect>
                <FieldError id="register-platform-error" message={errors.platform} />
              </FormGroup>
            </GridItem>
            <GridItem md={2}>
              <FormGroup label="Topology" fieldId="register-topology">
                <FormSelect
                  id="register-topology"
                  value={form.topology}
                  onChange={(_e, v) => set('topology')(v as Topology)}
                >
                  <FormSelectOption value="STANDALONE" label="Standalone" />
                  <FormSelectOption value="HOSTED" label="Hosted" />
                </FormSelect>
                <FieldError id="register-topology-error" message={errors.topology} />
              </FormGroup>
            </GridItem>
            <GridItem md={4}>
              {text('register-region', 'Region', form.region, set('region'), errors.region, {
                isRequired: true,
                placeholder: 'e.g. us-east-1',
              })}
            </GridItem>
            <GridItem md={4}>
              {text(
                'register-infra',
                'Infrastructure ID',
                form.infraID,
                set('infraID'),
                errors.infraID,
                {
                  placeholder: 'Optional',
                },
              )}
            </GridItem>
            <GridItem md={8}>
              {text('register-labels', 'Labels', form.labels, set('labels'), errors.labels, {
                placeholder: 'e.g. env=prod, tier=gold',
              })}
            </GridItem>
            {shown.managementCluster ? (
              <GridItem md={6}>
                {text(
                  'register-management',
                  'Management cluster',
                  form.managementCluster,
                  set('managementCluster'),
                  errors.managementCluster,
                  shown.hosted
                    ? {}
                    : { placeholder: 'Optional: where its Cluster API objects live' },
                )}
              </GridItem>
            ) : null}
            {shown.hosted ? (
              <GridItem md={6}>
                {text(
                  'register-hcp-namespace',
                  'Hosted control plane namespace',
                  form.hcpNamespace,
                  set('hcpNamespace'),
                  errors.hcpNamespace,
                )}
              </GridItem>
            ) : null}
            {shown.clusterApi ? (
              <>
                <GridItem md={6}>
                  {text(
                    'register-capi-name',
                    'Cluster API cluster name',
                    form.clusterApiName,
                    set('clusterApiName'),
                    errors.clusterApiName,
                    { isRequired: true, placeholder: 'On OpenShift, the infrastructure name' },
                  )}
                </GridItem>
                <GridItem md={4}>
                  {text(
                    'register-capi-namespace',
                    'Cluster API namespace',
                    form.clusterApiNamespace,
                    set('clusterApiNamespace'),
                    errors.clusterApiNamespace,
                    { placeholder: OPENSHIFT_CLUSTER_API_NAMESPACE },
                  )}
                </GridItem>
                <GridItem md={2}>
                  <FormGroup label="Infrastructure provider" fieldId="register-capi-provider">
                    <FormSelect
                      id="register-capi-provider"
                      value={form.infrastructureProvider}
                      aria-describedby="register-capi-provider-error"
                      validated={errors.infrastructureProvider ? 'error' : 'default'}
                      onChange={(_e, v) => set('infrastructureProvider')(v)}
                    >
                      {CLUSTER_API_PROVIDERS.map((p) => (
                        <FormSelectOption key={p} value={p} label={p.toUpperCase()} />
                      ))}
                    </FormSelect>
                    <FieldError
                      id="register-capi-provider-error"
                      message={errors.infrastructureProvider}
                    />
                  </FormGroup>
                </GridItem>
              </>
            ) : null}
          </Grid>
          <ActionGroup>
            <Button
              type="submit"
              variant="primary"
              data-mutates
              isLoading={register.pending}
              isDisabled={register.pending || !form.name.trim() || !form.region.trim()}
            >
              Register cluster
            </Button>
          </ActionGroup>
          {other ? (
            <Alert variant="danger" isInline title="The API refused the registration">
              {describeRefusal(other)}
            </Alert>
          ) : null}
        </Form>
      </CardBody>
      {manifest ? (
        <ShownOnce
          id="bootstrap-manifest"
          title={`${manifest.name} registered: its bootstrap manifest`}
          what="the bootstrap manifest"
          value={manifest.text}
          multiline
          onClose={() => setManifest(null)}
        />
      ) : null}
    </Card>
  );
}

const DEAD_LETTER_PAGE = 25;

function DeadLetters() {
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

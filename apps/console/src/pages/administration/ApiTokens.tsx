import {
  ActionGroup,
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Form,
  FormGroup,
  FormSelect,
  FormSelectOption,
  Grid,
  GridItem,
  Label,
  Skeleton,
  TextInput,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useState } from 'react';
import {
  ApiTokensDocument,
  CreateApiTokenDocument,
  RevokeApiTokenDocument,
  type ApiTokenFieldsFragment,
  type Role,
} from '../../graphql/generated.js';
import { describeRefusal } from '../../graphql/client.js';
import { ConfirmModal } from '../../components/ConfirmModal.js';
import { FieldError } from '../../components/FieldError.js';
import { ShownOnce } from '../../components/ShownOnce.js';
import { useMutation, useQuery } from '../../lib/hooks.js';
import { EXPIRY_CHOICES, expiresAt, tokenStatus } from '../../lib/admin-forms.js';
import { fieldMessage } from './field-message.js';

export function ApiTokens() {
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

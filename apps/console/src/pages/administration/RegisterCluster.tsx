import {
  ActionGroup,
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  Form,
  FormGroup,
  FormSelect,
  FormSelectOption,
  Grid,
  GridItem,
  TextInput,
} from '@patternfly/react-core';
import { useState } from 'react';
import { RegisterClusterDocument, type Platform, type Topology } from '../../graphql/generated.js';
import { describeRefusal } from '../../graphql/client.js';
import { FieldError } from '../../components/FieldError.js';
import { ShownOnce } from '../../components/ShownOnce.js';
import { useMutation } from '../../lib/hooks.js';
import {
  CLUSTER_API_PROVIDERS,
  OPENSHIFT_CLUSTER_API_NAMESPACE,
  registrationFields,
  registrationInput,
  type RegistrationForm,
} from '../../lib/admin-forms.js';
import { fieldMessage } from './field-message.js';

export function RegisterCluster() {
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

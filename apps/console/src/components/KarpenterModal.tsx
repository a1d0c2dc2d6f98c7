import {
  Alert,
  Button,
  Content,
  Form,
  FormGroup,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
  Radio,
  Switch,
  TextInput,
} from '@patternfly/react-core';
import { useState } from 'react';
import { SetKarpenterDocument, type ClusterDetailFragment } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useMutation } from '../lib/hooks.js';
import {
  describeKarpenterChange,
  parseInstanceTypes,
  type CasMode,
} from '../lib/karpenter-change.js';
import { FieldError } from './FieldError.js';
import { PlanPreview } from './PlanPreview.js';

const MODES: { mode: CasMode; label: string; description: string }[] = [
  { mode: 'KEEP', label: 'Keep', description: 'The Cluster Autoscaler keeps running.' },
  {
    mode: 'DISABLE',
    label: 'Disable',
    description: 'Karpenter alone scales the cluster; a copy of the autoscaler is kept.',
  },
  {
    mode: 'MIGRATE',
    label: 'Migrate',
    description: 'Both run side by side, visibly, while you move workloads.',
  },
];

/**
 * Two steps: choose, then read exactly what the cluster will see and confirm. The change is sent
 * with the generation it was decided on, so a concurrent change is refused rather than trampled.
 */
export function KarpenterModal({
  cluster,
  onClose,
  onSaved,
}: {
  cluster: ClusterDetailFragment;
  onClose: () => void;
  onSaved: (cluster: ClusterDetailFragment) => void;
}) {
  // Instance types are the Cluster API driver's: only a CAPI cluster is offered them (the API
  // refuses them elsewhere).
  const capi = cluster.platform === 'CAPI';
  const [from] = useState({
    enabled: cluster.karpenter.enabled,
    clusterAutoscalerMode: cluster.karpenter.clusterAutoscalerMode,
    allowedInstanceTypes: cluster.karpenter.allowedInstanceTypes,
  });
  const [enabled, setEnabled] = useState(from.enabled);
  const [mode, setMode] = useState<CasMode>(from.clusterAutoscalerMode);
  const [typesText, setTypesText] = useState(from.allowedInstanceTypes.join(', '));
  const types = parseInstanceTypes(typesText);
  const [confirming, setConfirming] = useState(false);
  // Preview: the same change planned on the cluster (PlanPreview), applied with applyPlan; the
  // confirmation's Apply stays the direct path (setKarpenter with the generation decided on).
  const [previewing, setPreviewing] = useState(false);
  // The generation this decision was made on: live updates must not quietly move it, or a change
  // made by someone else meanwhile would be overwritten instead of refused.
  const [decidedOn] = useState(cluster.karpenter.generation);
  const mutation = useMutation(SetKarpenterDocument);
  const steps = describeKarpenterChange(
    {
      name: cluster.name,
      nodePools: cluster.nodePools.length,
      machineAutoscalers: cluster.status.clusterAutoscaler?.machineAutoscalers ?? null,
      observed: cluster.status.clusterAutoscaler?.observed ?? null,
    },
    from,
    {
      enabled,
      clusterAutoscalerMode: mode,
      allowedInstanceTypes: capi ? types : from.allowedInstanceTypes,
    },
  );

  // A refusal of the instance types is shown at their field, back on the form.
  // The API names the list or one of its items (input.allowedInstanceTypes[1]).
  const typesError = /^input\.allowedInstanceTypes(\[|$)/.test(mutation.error?.field ?? '')
    ? describeRefusal(mutation.error!)
    : undefined;

  const save = async () => {
    const result = await mutation.run({
      clusterId: cluster.id,
      input: {
        enabled,
        clusterAutoscalerMode: mode,
        ...(capi ? { allowedInstanceTypes: types } : {}),
        expectedGeneration: decidedOn,
      },
    });
    if (result) onSaved(result.setKarpenter);
    // Back to the form, where a refusal of the instance types shows at their field.
    else if (capi) setConfirming(false);
  };

  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="karpenter-modal-title">
      <ModalHeader
        title={
          previewing
            ? `Preview on ${cluster.name}`
            : confirming
              ? `Apply to ${cluster.name}?`
              : 'Karpenter and the Cluster Autoscaler'
        }
        labelId="karpenter-modal-title"
      />
      <ModalBody>
        {previewing ? (
          <PlanPreview
            clusterId={cluster.id}
            change={{
              change: {
                enabled,
                clusterAutoscalerMode: mode,
                ...(capi ? { allowedInstanceTypes: types } : {}),
              },
            }}
            onApplied={onSaved}
            onBack={() => setPreviewing(false)}
          />
        ) : !confirming ? (
          <Form>
            <FormGroup label="Karpenter" fieldId="karpenter-enabled">
              <Switch
                id="karpenter-enabled"
                label="Enabled"
                isChecked={enabled}
                onChange={(_e, v) => setEnabled(v)}
              />
            </FormGroup>
            <FormGroup label="Cluster Autoscaler" role="radiogroup" fieldId="cas-mode" isInline>
              {MODES.map((m) => (
                <Radio
                  key={m.mode}
                  id={`cas-${m.mode}`}
                  name="cas-mode"
                  label={m.label}
                  description={m.description}
                  isChecked={mode === m.mode}
                  onChange={() => setMode(m.mode)}
                />
              ))}
            </FormGroup>
            {capi ? (
              <FormGroup label="Allowed instance types" fieldId="karpenter-instance-types">
                <TextInput
                  id="karpenter-instance-types"
                  value={typesText}
                  placeholder="The worker template's type"
                  validated={typesError ? 'error' : 'default'}
                  aria-describedby="karpenter-instance-types-help karpenter-instance-types-error"
                  onChange={(_e, v) => setTypesText(v)}
                />
                <Content component="small" id="karpenter-instance-types-help">
                  Comma-separated. The fleet renders a Cluster API MachineDeployment for each type
                  and failure domain; empty means the worker template&apos;s own type.
                </Content>
                <FieldError id="karpenter-instance-types-error" message={typesError} />
              </FormGroup>
            ) : null}
          </Form>
        ) : (
          <>
            <Content component="p">This is what will happen on the cluster:</Content>
            <Content component="ol" data-testid="karpenter-change-steps">
              {steps.map((step) => (
                <Content component="li" key={step}>
                  {step}
                </Content>
              ))}
            </Content>
          </>
        )}
        {mutation.error && !typesError && !previewing ? (
          <Alert variant="danger" isInline title="The API refused the change" className="fleet-gap">
            {describeRefusal(mutation.error)}
          </Alert>
        ) : null}
      </ModalBody>
      <ModalFooter>
        {previewing ? null : !confirming ? (
          <Button
            variant="primary"
            isDisabled={steps.length === 0}
            onClick={() => setConfirming(true)}
          >
            Review
          </Button>
        ) : (
          <>
            <Button
              variant="primary"
              isLoading={mutation.pending}
              isDisabled={mutation.pending}
              onClick={() => void save()}
            >
              Apply
            </Button>
            <Button
              variant="secondary"
              onClick={() => {
                mutation.reset();
                setPreviewing(true);
              }}
            >
              Preview on the cluster
            </Button>
            <Button variant="secondary" onClick={() => setConfirming(false)}>
              Back
            </Button>
          </>
        )}
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

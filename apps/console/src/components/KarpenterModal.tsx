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
} from '@patternfly/react-core';
import { useState } from 'react';
import { SetKarpenterDocument, type ClusterDetailFragment } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useMutation } from '../lib/hooks.js';
import { describeKarpenterChange, type CasMode } from '../lib/karpenter-change.js';

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
  const [from] = useState({
    enabled: cluster.karpenter.enabled,
    clusterAutoscalerMode: cluster.karpenter.clusterAutoscalerMode,
  });
  const [enabled, setEnabled] = useState(from.enabled);
  const [mode, setMode] = useState<CasMode>(from.clusterAutoscalerMode);
  const [confirming, setConfirming] = useState(false);
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
    { enabled, clusterAutoscalerMode: mode },
  );

  const save = async () => {
    const result = await mutation.run({
      clusterId: cluster.id,
      input: {
        enabled,
        clusterAutoscalerMode: mode,
        expectedGeneration: decidedOn,
      },
    });
    if (result) onSaved(result.setKarpenter);
  };

  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="karpenter-modal-title">
      <ModalHeader
        title={confirming ? `Apply to ${cluster.name}?` : 'Karpenter and the Cluster Autoscaler'}
        labelId="karpenter-modal-title"
      />
      <ModalBody>
        {!confirming ? (
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
        {mutation.error ? (
          <Alert variant="danger" isInline title="The API refused the change" className="fleet-gap">
            {describeRefusal(mutation.error)}
          </Alert>
        ) : null}
      </ModalBody>
      <ModalFooter>
        {!confirming ? (
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

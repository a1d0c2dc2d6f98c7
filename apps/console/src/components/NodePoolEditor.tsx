import {
  Alert,
  Button,
  Form,
  FormGroup,
  FormHelperText,
  HelperText,
  HelperTextItem,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
  TextArea,
  TextInput,
  ToggleGroup,
  ToggleGroupItem,
} from '@patternfly/react-core';
import { useState } from 'react';
import { parse, stringify } from 'yaml';
import { UpsertNodePoolDocument, type ClusterDetailFragment } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useMutation } from '../lib/hooks.js';
import { lineOf, specPath } from '../lib/field-location.js';
import { PlanPreview } from './PlanPreview.js';

type Format = 'yaml' | 'json';

const render = (spec: unknown, format: Format) =>
  format === 'yaml' ? stringify(spec) : `${JSON.stringify(spec, null, 2)}\n`;

export const NEW_NODEPOOL_SPEC = {
  template: {
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    },
  },
  limits: { cpu: '64' },
};

/**
 * The spec as text (YAML, or JSON for those who prefer it). Nothing is checked here beyond
 * parsing: the API checks against the real CRD, and its refusal is shown at the offending field
 * (and line), with nothing saved.
 */
export function NodePoolEditor({
  cluster,
  nodePool,
  onClose,
  onSaved,
}: {
  cluster: ClusterDetailFragment;
  nodePool: { name: string; spec: unknown } | null;
  onClose: () => void;
  onSaved: (cluster: ClusterDetailFragment) => void;
}) {
  const [name, setName] = useState(nodePool?.name ?? '');
  const [format, setFormat] = useState<Format>('yaml');
  const [text, setText] = useState(render(nodePool?.spec ?? NEW_NODEPOOL_SPEC, 'yaml'));
  const [parseError, setParseError] = useState<string | null>(null);
  const mutation = useMutation(UpsertNodePoolDocument);
  // As in KarpenterModal: a concurrent change is refused rather than overwritten.
  const [editedOn] = useState(cluster.karpenter.generation);
  // Preview: the spec as parsed when asked, planned on the cluster (PlanPreview); Save stays the
  // direct path (upsertNodePool with the generation edited on).
  const [preview, setPreview] = useState<{ spec: unknown } | null>(null);

  const parsed = (): { ok: true; spec: unknown } | { ok: false; message: string } => {
    try {
      return {
        ok: true,
        spec: format === 'yaml' ? (parse(text) as unknown) : (JSON.parse(text) as unknown),
      };
    } catch (err) {
      return { ok: false, message: err instanceof Error ? err.message : String(err) };
    }
  };

  const switchFormat = (next: Format) => {
    if (next === format) return;
    const current = parsed();
    if (!current.ok) {
      setParseError(current.message);
      return;
    }
    setParseError(null);
    setFormat(next);
    setText(render(current.spec, next));
  };

  const save = async () => {
    const current = parsed();
    if (!current.ok) {
      setParseError(current.message);
      return;
    }
    setParseError(null);
    const result = await mutation.run({
      clusterId: cluster.id,
      input: { name, spec: current.spec, expectedGeneration: editedOn },
    });
    if (result) onSaved(result.upsertNodePool);
  };

  const startPreview = () => {
    const current = parsed();
    if (!current.ok) {
      setParseError(current.message);
      return;
    }
    setParseError(null);
    mutation.reset();
    setPreview({ spec: current.spec });
  };

  const error = mutation.error;
  const path = specPath(error?.field);
  const nameError = error?.field === 'input.name' ? error : undefined;
  const specError = path ? error : undefined;
  const otherError = error && !nameError && !specError ? error : undefined;
  const line = specError && path ? lineOf(text, path) : null;

  return (
    <Modal isOpen onClose={onClose} variant="large" aria-labelledby="nodepool-editor-title">
      <ModalHeader
        title={
          preview
            ? `Preview of NodePool ${name} on ${cluster.name}`
            : nodePool
              ? `Edit NodePool ${nodePool.name}`
              : 'Add a NodePool'
        }
        labelId="nodepool-editor-title"
      />
      <ModalBody>
        {preview ? (
          <PlanPreview
            clusterId={cluster.id}
            change={{ upsertNodePool: { name, spec: preview.spec } }}
            onApplied={onSaved}
            onBack={() => setPreview(null)}
          />
        ) : (
          <Form
            onSubmit={(event) => {
              event.preventDefault();
              void save();
            }}
          >
            <FormGroup label="Name" isRequired fieldId="nodepool-name">
              <TextInput
                id="nodepool-name"
                isRequired
                value={name}
                isDisabled={!!nodePool}
                validated={nameError ? 'error' : 'default'}
                onChange={(_e, v) => setName(v)}
              />
              {nameError ? (
                <FormHelperText>
                  <HelperText>
                    <HelperTextItem variant="error">{nameError.message}</HelperTextItem>
                  </HelperText>
                </FormHelperText>
              ) : null}
            </FormGroup>
            <FormGroup label="Spec (karpenter.sh/v1 NodePool)" isRequired fieldId="nodepool-spec">
              <ToggleGroup aria-label="Format" className="fleet-gap-bottom">
                <ToggleGroupItem
                  text="YAML"
                  isSelected={format === 'yaml'}
                  onChange={() => switchFormat('yaml')}
                />
                <ToggleGroupItem
                  text="JSON"
                  isSelected={format === 'json'}
                  onChange={() => switchFormat('json')}
                />
              </ToggleGroup>
              <TextArea
                id="nodepool-spec"
                className="fleet-code"
                value={text}
                rows={20}
                resizeOrientation="vertical"
                spellCheck={false}
                validated={specError || parseError ? 'error' : 'default'}
                aria-describedby="nodepool-spec-error"
                onChange={(_e, v) => setText(v)}
              />
              {specError || parseError ? (
                <FormHelperText>
                  <HelperText id="nodepool-spec-error" data-testid="nodepool-spec-error">
                    <HelperTextItem variant="error">
                      {parseError
                        ? `Not valid ${format.toUpperCase()}: ${parseError}`
                        : `${line ? `Line ${line}: ` : ''}${specError!.field}: ${specError!.message.replace(`${specError!.field}: `, '')}`}
                    </HelperTextItem>
                  </HelperText>
                </FormHelperText>
              ) : null}
            </FormGroup>
          </Form>
        )}
        {otherError && !preview ? (
          <Alert
            variant="danger"
            isInline
            title="The API refused the NodePool"
            className="fleet-gap"
          >
            {describeRefusal(otherError)}
          </Alert>
        ) : null}
      </ModalBody>
      <ModalFooter>
        {!preview ? (
          <>
            <Button variant="primary" isDisabled={!name} onClick={startPreview}>
              Preview
            </Button>
            <Button
              variant="secondary"
              isLoading={mutation.pending}
              isDisabled={!name || mutation.pending}
              onClick={() => void save()}
            >
              Save
            </Button>
          </>
        ) : null}
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

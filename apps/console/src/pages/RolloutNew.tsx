import {
  ActionGroup,
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  Form,
  FormGroup,
  FormSection,
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
import { useEffect, useMemo, useState } from 'react';
import {
  RolloutPreviewDocument,
  RolloutStrategiesDocument,
  StartRolloutDocument,
  type RolloutStrategyInput,
} from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { FieldError } from '../components/FieldError.js';
import { StrategySummary } from '../components/StrategySummary.js';
import { useMutation, useQuery } from '../lib/hooks.js';
import { Link, useRouter } from '../lib/router.js';
import {
  DEFAULT_WAVE_STEPS,
  EMPTY_CHANGE,
  formatWaveSteps,
  parseWaveSteps,
  planNamedStages,
  rolloutChange,
  splitIntoWaves,
  waveSizes,
  type NamedWave,
  type RolloutChangeForm,
} from '../lib/rollout-plan.js';
import { parseRolloutPicks } from '../lib/url-state.js';

/** The preview lists this many matched clusters by name; the plan itself counts them all. */
const PREVIEW_NAMES = 100;

/**
 * Start a rollout: the change, the clusters (a selector, or rows picked on the clusters page),
 * the strategy, with a live preview of what would be selected and the waves it would form. The
 * API decides at start (it fixes the set then); the preview is what it would pick now.
 */
export function RolloutNew() {
  const { search, navigate } = useRouter();
  const picks = useMemo(() => parseRolloutPicks(search), [search]);
  const [selector, setSelector] = useState(picks.selector);
  const [appliedSelector, setAppliedSelector] = useState(picks.selector);
  const [change, setChange] = useState<RolloutChangeForm>(EMPTY_CHANGE);
  const [wavesText, setWavesText] = useState(formatWaveSteps(DEFAULT_WAVE_STEPS));
  const [minHealthy, setMinHealthy] = useState('60');
  const [maxFailures, setMaxFailures] = useState('0');
  const [waveTimeout, setWaveTimeout] = useState('1800');
  // '' is the inline strategy below; otherwise the name of one of rolloutStrategies.
  const [strategyName, setStrategyName] = useState('');
  const start = useMutation(StartRolloutDocument);
  const strategies = useQuery(RolloutStrategiesDocument, {});
  const named = strategyName
    ? strategies.data?.rolloutStrategies.find((s) => s.name === strategyName)
    : undefined;

  // The preview follows the selector as typed, once typing pauses.
  useEffect(() => {
    const timer = setTimeout(() => setAppliedSelector(selector.trim()), 300);
    return () => clearTimeout(timer);
  }, [selector]);
  const preview = useQuery(RolloutPreviewDocument, {
    filter: appliedSelector ? { labelSelector: appliedSelector } : {},
    first: PREVIEW_NAMES,
  });

  const steps = parseWaveSteps(wavesText);
  const picked = [...picks.clusters].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const matched = picked.length
    ? { total: picked.length, exact: true, names: picked.map((c) => c.name) }
    : preview.data && !preview.error
      ? {
          total: preview.data.clusters.totalCount,
          exact: preview.data.clusters.totalCountIsExact,
          names: preview.data.clusters.nodes.map((c) => c.name),
        }
      : null;
  // Waves are sized on an exact total only: past the API's count limit (issue 48) the total is a
  // lower bound, and the rollout sizes its waves when it starts.
  const sized = matched?.exact ? matched : null;
  // A named strategy's stages carry their own gates; null when a selector stage decides at start.
  const namedWaves: NamedWave[] | null =
    sized && named ? planNamedStages(sized.total, named.stages) : null;
  const sizes = named
    ? (namedWaves?.map((w) => w.size) ?? [])
    : sized && 'steps' in steps
      ? waveSizes(sized.total, steps.steps)
      : [];
  const waves = sized ? splitIntoWaves(sized.names, sizes) : [];

  const changeInput = rolloutChange(change);
  const error = start.error;
  const errorAt = (prefix: string) =>
    error?.field?.startsWith(prefix) ? describeRefusal(error) : undefined;
  const fieldErrors = {
    selector: errorAt('selector') ?? errorAt('clusterIds'),
    change: errorAt('change'),
    strategyName: errorAt('strategyName'),
    waves: 'error' in steps ? steps.error : errorAt('strategy.waves'),
    minHealthySeconds: errorAt('strategy.minHealthySeconds'),
    maxFailures: errorAt('strategy.maxFailures'),
    waveTimeoutSeconds: errorAt('strategy.waveTimeoutSeconds'),
  };
  const otherError =
    error && !Object.values(fieldErrors).some((m) => m === describeRefusal(error))
      ? error
      : undefined;

  const submit = async () => {
    if (!strategyName && !('steps' in steps)) return;
    // The API takes one or the other: both at once is refused on strategyName.
    const strategy: { strategy: RolloutStrategyInput } | { strategyName: string } = strategyName
      ? { strategyName }
      : {
          strategy: {
            waves: 'steps' in steps ? steps.steps : [],
            minHealthySeconds: Number(minHealthy),
            maxFailures: Number(maxFailures),
            waveTimeoutSeconds: Number(waveTimeout),
          },
        };
    const result = await start.run({
      selector: selector.trim(),
      change: changeInput,
      ...strategy,
      ...(picked.length ? { clusterIds: picked.map((c) => c.id) } : {}),
    });
    if (result) navigate(`/rollouts/${encodeURIComponent(result.startRollout.id)}`);
  };

  const set = (patch: Partial<RolloutChangeForm>) => setChange((c) => ({ ...c, ...patch }));
  return (
    <>
      <PageSection>
        <Breadcrumb>
          <BreadcrumbItem>
            <Link to="/rollouts">Rollouts</Link>
          </BreadcrumbItem>
          <BreadcrumbItem isActive>New rollout</BreadcrumbItem>
        </Breadcrumb>
        <Title headingLevel="h1" className="fleet-gap">
          Start a rollout
        </Title>
      </PageSection>
      <PageSection>
        <Grid hasGutter>
          <GridItem lg={6}>
            <Form
              onSubmit={(event) => {
                event.preventDefault();
                void submit();
              }}
            >
              <FormSection title="Clusters" titleElement="h2">
                <FormGroup label="Label selector" fieldId="rollout-selector">
                  <TextInput
                    id="rollout-selector"
                    value={selector}
                    placeholder="e.g. env=prod,tier in (gold); empty selects every cluster"
                    validated={fieldErrors.selector ? 'error' : 'default'}
                    aria-describedby="rollout-selector-error"
                    onChange={(_e, v) => setSelector(v)}
                  />
                  <FieldError id="rollout-selector-error" message={fieldErrors.selector} />
                </FormGroup>
                {picked.length ? (
                  <Content component="p" data-testid="rollout-picked">
                    Only the {picked.length} cluster{picked.length === 1 ? '' : 's'} picked on the
                    clusters page: {picked.map((c) => c.name).join(', ')}. Each must match the
                    selector. <Link to="/rollouts/new">Use the selector alone</Link>
                  </Content>
                ) : null}
              </FormSection>
              <FormSection title="Change" titleElement="h2">
                <FormGroup label="Karpenter" fieldId="rollout-karpenter">
                  <FormSelect
                    id="rollout-karpenter"
                    value={change.karpenter}
                    onChange={(_e, v) => set({ karpenter: v as RolloutChangeForm['karpenter'] })}
                  >
                    <FormSelectOption value="" label="No change" />
                    <FormSelectOption value="enable" label="Enable" />
                    <FormSelectOption value="disable" label="Disable" />
                  </FormSelect>
                </FormGroup>
                <FormGroup label="Cluster Autoscaler" fieldId="rollout-cas">
                  <FormSelect
                    id="rollout-cas"
                    value={change.clusterAutoscalerMode}
                    onChange={(_e, v) =>
                      set({
                        clusterAutoscalerMode: v as RolloutChangeForm['clusterAutoscalerMode'],
                      })
                    }
                  >
                    <FormSelectOption value="" label="No change" />
                    <FormSelectOption value="KEEP" label="Keep" />
                    <FormSelectOption value="DISABLE" label="Disable (once Karpenter takes over)" />
                    <FormSelectOption value="MIGRATE" label="Migrate (both side by side)" />
                  </FormSelect>
                </FormGroup>
                <FormGroup label="Log level" fieldId="rollout-log-level">
                  <FormSelect
                    id="rollout-log-level"
                    value={change.logLevel}
                    onChange={(_e, v) => set({ logLevel: v as RolloutChangeForm['logLevel'] })}
                  >
                    <FormSelectOption value="" label="No change" />
                    <FormSelectOption value="debug" label="debug" />
                    <FormSelectOption value="info" label="info" />
                    <FormSelectOption value="error" label="error" />
                  </FormSelect>
                </FormGroup>
                <FormGroup label="Karpenter release" fieldId="rollout-version">
                  <TextInput
                    id="rollout-version"
                    value={change.karpenterVersion}
                    placeholder="No change (e.g. 1.14.1)"
                    onChange={(_e, v) => set({ karpenterVersion: v })}
                  />
                </FormGroup>
                <FieldError id="rollout-change-error" message={fieldErrors.change} />
              </FormSection>
              <FormSection title="Strategy" titleElement="h2">
                <FormGroup label="Rollout strategy" fieldId="rollout-strategy">
                  <FormSelect
                    id="rollout-strategy"
                    value={strategyName}
                    validated={fieldErrors.strategyName ? 'error' : 'default'}
                    aria-describedby="rollout-strategy-error"
                    onChange={(_e, v) => setStrategyName(v)}
                  >
                    <FormSelectOption value="" label="Inline: the waves and limits below" />
                    {strategies.data?.rolloutStrategies.map((s) => (
                      <FormSelectOption key={s.name} value={s.name} label={`Named: ${s.name}`} />
                    ))}
                  </FormSelect>
                  <FieldError id="rollout-strategy-error" message={fieldErrors.strategyName} />
                  {strategies.error ? (
                    <FieldError
                      id="rollout-strategies-error"
                      message={`named strategies could not be loaded: ${describeRefusal(strategies.error)}`}
                    />
                  ) : null}
                </FormGroup>
                {named ? (
                  <div data-testid="rollout-named-strategy">
                    <StrategySummary strategy={named} />
                    <Content component="small">
                      Its stages are copied into the rollout at start: editing the strategy later
                      changes no rollout already started.
                    </Content>
                  </div>
                ) : null}
              </FormSection>
              {!strategyName ? (
                <FormSection title="Inline strategy" titleElement="h3">
                  <FormGroup label="Waves (cumulative)" fieldId="rollout-waves">
                    <TextInput
                      id="rollout-waves"
                      value={wavesText}
                      validated={fieldErrors.waves ? 'error' : 'default'}
                      aria-describedby="rollout-waves-error"
                      onChange={(_e, v) => setWavesText(v)}
                    />
                    <FieldError id="rollout-waves-error" message={fieldErrors.waves} />
                  </FormGroup>
                  <FormGroup
                    label="Healthy for (seconds) before a cluster counts"
                    fieldId="rollout-min-healthy"
                  >
                    <TextInput
                      id="rollout-min-healthy"
                      type="number"
                      value={minHealthy}
                      validated={fieldErrors.minHealthySeconds ? 'error' : 'default'}
                      onChange={(_e, v) => setMinHealthy(v)}
                    />
                    <FieldError
                      id="rollout-min-healthy-error"
                      message={fieldErrors.minHealthySeconds}
                    />
                  </FormGroup>
                  <FormGroup label="Failed clusters tolerated" fieldId="rollout-max-failures">
                    <TextInput
                      id="rollout-max-failures"
                      type="number"
                      value={maxFailures}
                      validated={fieldErrors.maxFailures ? 'error' : 'default'}
                      onChange={(_e, v) => setMaxFailures(v)}
                    />
                    <FieldError id="rollout-max-failures-error" message={fieldErrors.maxFailures} />
                  </FormGroup>
                  <FormGroup label="Wave timeout (seconds)" fieldId="rollout-wave-timeout">
                    <TextInput
                      id="rollout-wave-timeout"
                      type="number"
                      value={waveTimeout}
                      validated={fieldErrors.waveTimeoutSeconds ? 'error' : 'default'}
                      onChange={(_e, v) => setWaveTimeout(v)}
                    />
                    <FieldError
                      id="rollout-wave-timeout-error"
                      message={fieldErrors.waveTimeoutSeconds}
                    />
                  </FormGroup>
                </FormSection>
              ) : null}
              {otherError ? (
                <Alert variant="danger" isInline title="The API refused the rollout">
                  {describeRefusal(otherError)}
                </Alert>
              ) : null}
              <ActionGroup>
                <Button
                  type="submit"
                  variant="primary"
                  data-mutates
                  isLoading={start.pending}
                  isDisabled={
                    start.pending ||
                    Object.keys(changeInput).length === 0 ||
                    (!strategyName && !('steps' in steps)) ||
                    (!!strategyName && !named) ||
                    !matched?.total
                  }
                >
                  Start rollout
                </Button>
                <Link to="/rollouts" className="pf-v6-c-button pf-m-link">
                  Cancel
                </Link>
              </ActionGroup>
            </Form>
          </GridItem>
          <GridItem lg={6}>
            <Card>
              <CardTitle component="h2">Preview</CardTitle>
              <CardBody>
                {!picked.length && preview.error ? (
                  <Alert variant="danger" isInline title="The selector is refused">
                    {describeRefusal(preview.error)}
                  </Alert>
                ) : null}
                {!matched && !preview.error ? (
                  <Skeleton height="120px" screenreaderText="Loading the preview" />
                ) : null}
                {matched ? (
                  <>
                    <Content component="p" data-testid="rollout-preview-total">
                      {matched.total === 0
                        ? 'No cluster matches: a rollout would be refused.'
                        : !matched.exact
                          ? `More than ${matched.total} clusters match; the rollout sizes its waves when it starts${Object.keys(changeInput).length ? '' : ' (choose a change)'}.`
                          : `${matched.total} cluster${matched.total === 1 ? '' : 's'} in ${sizes.length} wave${sizes.length === 1 ? '' : 's'}${Object.keys(changeInput).length ? '' : ' (choose a change)'}.`}
                    </Content>
                    <Content component="ol" data-testid="rollout-preview-waves">
                      {waves.map((names, i) => (
                        <Content component="li" key={i}>
                          <Label isCompact color="blue">
                            Wave {i + 1}: {sizes[i]} cluster{sizes[i] === 1 ? '' : 's'}
                          </Label>{' '}
                          {names.join(', ')}
                          {names.length < (sizes[i] ?? 0)
                            ? `${names.length ? ', ' : ''}and ${(sizes[i] ?? 0) - names.length} more`
                            : ''}
                          {namedWaves?.[i] ? (
                            <div data-testid={`rollout-preview-wave-${i}-gates`}>
                              <Content component="small">
                                {describeNamedWave(namedWaves[i])}
                              </Content>
                            </div>
                          ) : null}
                        </Content>
                      ))}
                    </Content>
                    {named && !namedWaves ? (
                      <Content component="p" data-testid="rollout-preview-selector-stages">
                        {named.name} takes clusters by label selector: which of these each stage
                        takes is decided on their labels at start, and the waves are on the
                        rollout&apos;s page then.
                      </Content>
                    ) : null}
                    <Content component="small">
                      Clusters are taken by name. Each wave starts once every cluster of the one
                      before reports the change healthy for the time{' '}
                      {named ? 'its stage sets' : 'above'}
                      {named ? ', then after its pause and approval' : ''}; more failures than
                      tolerated stop the rollout.
                    </Content>
                  </>
                ) : null}
              </CardBody>
            </Card>
          </GridItem>
        </Grid>
      </PageSection>
    </>
  );
}

/** A named strategy's wave in the preview: how long its clusters stay healthy, then its gates. */
function describeNamedWave(wave: NamedWave): string {
  return [
    `healthy for ${wave.minHealthySeconds} s`,
    wave.pauseSeconds ? `then a ${wave.pauseSeconds} s pause` : null,
    wave.approval ? 'then an approval gate' : null,
  ]
    .filter(Boolean)
    .join(', ');
}

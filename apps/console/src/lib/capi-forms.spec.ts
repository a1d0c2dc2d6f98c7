import { describe, expect, it } from '@jest/globals';
import { registrationFields, registrationInput, type RegistrationForm } from './admin-forms.js';
import { describeKarpenterChange, parseInstanceTypes } from './karpenter-change.js';

const blank: RegistrationForm = {
  name: ' capi-west ',
  platform: 'CAPI',
  topology: 'STANDALONE',
  region: ' us-west-2 ',
  infraID: '',
  labels: 'env=prod',
  managementCluster: ' mgmt-west ',
  hcpNamespace: 'typed-before-switching',
  clusterApiName: ' capi-west-x7k2p ',
  clusterApiNamespace: '',
  infrastructureProvider: 'aws',
};

describe('the registration form', () => {
  it('shows the Cluster API fields and the management cluster for CAPI only', () => {
    expect(registrationFields({ platform: 'CAPI', topology: 'STANDALONE' })).toEqual({
      hosted: false,
      clusterApi: true,
      managementCluster: true,
    });
    expect(registrationFields({ platform: 'AWS', topology: 'STANDALONE' })).toEqual({
      hosted: false,
      clusterApi: false,
      managementCluster: false,
    });
    expect(registrationFields({ platform: 'AWS', topology: 'HOSTED' })).toEqual({
      hosted: true,
      clusterApi: false,
      managementCluster: true,
    });
  });

  it('sends a CAPI registration trimmed, empty fields left to the API, hidden ones never', () => {
    expect(registrationInput(blank)).toEqual({
      input: {
        name: 'capi-west',
        platform: 'CAPI',
        topology: 'STANDALONE',
        region: 'us-west-2',
        labels: { env: 'prod' },
        managementCluster: 'mgmt-west',
        clusterApiName: 'capi-west-x7k2p',
        infrastructureProvider: 'aws',
      },
    });
  });

  it('drops the Cluster API fields typed before switching to another platform', () => {
    const result = registrationInput({ ...blank, platform: 'AWS', clusterApiNamespace: 'capi' });
    expect(result).toEqual({
      input: {
        name: 'capi-west',
        platform: 'AWS',
        topology: 'STANDALONE',
        region: 'us-west-2',
        labels: { env: 'prod' },
      },
    });
  });

  it('sends the hosted fields for a hosted cluster', () => {
    const result = registrationInput({ ...blank, platform: 'AWS', topology: 'HOSTED' });
    expect('input' in result && result.input).toMatchObject({
      managementCluster: 'mgmt-west',
      hcpNamespace: 'typed-before-switching',
    });
    expect('input' in result && 'clusterApiName' in result.input).toBe(false);
  });

  it('refuses labels that are not key=value at their field, before sending', () => {
    expect(registrationInput({ ...blank, labels: 'env=prod, oops' })).toEqual({
      field: 'input.labels',
      error: 'input.labels: "oops" is not key=value',
    });
  });
});

describe('allowed instance types (CAPI)', () => {
  it('splits on commas and spaces, and only splits', () => {
    expect(parseInstanceTypes(' m6i.large, c6i.xlarge  r6i.2xlarge,,')).toEqual([
      'm6i.large',
      'c6i.xlarge',
      'r6i.2xlarge',
    ]);
    expect(parseInstanceTypes('m6i.large m6i.large')).toEqual(['m6i.large', 'm6i.large']);
    expect(parseInstanceTypes('  ')).toEqual([]);
  });

  const facts = { name: 'capi-east', nodePools: 1, machineAutoscalers: null, observed: null };
  const on = { enabled: true, clusterAutoscalerMode: 'DISABLE' as const };

  it('says what a new list renders, so a change of types alone can be confirmed', () => {
    const steps = describeKarpenterChange(
      facts,
      { ...on, allowedInstanceTypes: [] },
      { ...on, allowedInstanceTypes: ['m6i.large', 'c6i.xlarge'] },
    );
    expect(steps).toHaveLength(2);
    expect(steps[0]).toMatch(/offers each of those instance types .*InstanceTypeNotOffered/);
    expect(steps[0]).toMatch(/one per failure domain for m6i\.large, c6i\.xlarge\.$/);
    expect(steps[1]).toMatch(/generation goes up by one/);
  });

  it("says an emptied list goes back to the worker template's type", () => {
    const [step] = describeKarpenterChange(
      facts,
      { ...on, allowedInstanceTypes: ['m6i.large'] },
      { ...on, allowedInstanceTypes: [] },
    );
    expect(step).toMatch(/for the worker template's own type\.$/);
  });

  it('is empty when the list is the same, in the same order', () => {
    const same = { ...on, allowedInstanceTypes: ['m6i.large'] };
    expect(describeKarpenterChange(facts, same, { ...same })).toEqual([]);
    expect(describeKarpenterChange(facts, on, { ...on, allowedInstanceTypes: [] })).toEqual([]);
  });
});

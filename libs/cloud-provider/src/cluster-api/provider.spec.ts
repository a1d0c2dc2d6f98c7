import { describe, expect, it } from '@jest/globals';
import { AWS_MACHINE_TEMPLATE } from '@fleet/discovery';
import { InvalidDesiredStateError } from '../errors.js';
import { ClusterApiCloudProvider } from './provider.js';

const provider = (access: 'same-cluster' | 'separate-cluster') =>
  new ClusterApiCloudProvider({
    namespace: 'capi-east',
    access,
    templateKinds: [AWS_MACHINE_TEMPLATE],
  });

describe('ClusterApiCloudProvider', () => {
  it('owns the Cluster API objects on the management side, in the Cluster namespace only', () => {
    const kinds = provider('same-cluster').ownedKinds();
    const management = kinds.filter((k) => k.target === 'management');
    expect(management.map((k) => [k.kind, k.namespaces])).toEqual([
      ['AWSMachineTemplate', ['capi-east']],
      ['MachineDeployment', ['capi-east']],
    ]);
    // Templates before the MachineDeployments using them; pruned (in reverse) after them.
    const order = kinds.map((k) => k.kind);
    expect(order.indexOf('AWSMachineTemplate')).toBeLessThan(order.indexOf('MachineDeployment'));
  });

  it('with a separate management cluster, also owns the ServiceAccount and cluster-wide rule it grants there', () => {
    const management = provider('separate-cluster')
      .ownedKinds()
      .filter((k) => k.target === 'management')
      .map((k) => k.kind);
    expect(management).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'AWSMachineTemplate',
      'MachineDeployment',
    ]);
  });

  it("sets a MachineDeployment's replicas only at creation, nothing else", () => {
    const p = provider('same-cluster');
    const md = {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'MachineDeployment',
      metadata: { name: 'x' },
    };
    expect(p.createOnlyFields(md)).toEqual([['spec', 'replicas']]);
    expect(p.createOnlyFields({ ...md, apiVersion: 'apps/v1', kind: 'Deployment' })).toEqual([]);
  });

  it('refuses every cloud NodeClass override, naming each field', () => {
    const p = provider('same-cluster');
    expect(() => p.validateNodeClassOverrides({})).not.toThrow();
    let error: unknown;
    try {
      p.validateNodeClassOverrides({ tags: { a: 'b' }, kubelet: { maxPods: 10 } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidDesiredStateError);
    expect((error as InvalidDesiredStateError).causes.map((c) => c.field)).toEqual([
      'nodeClassOverrides.kubelet',
      'nodeClassOverrides.tags',
    ]);
  });

  it('verifies nothing whose providerID is not a provider URI, without listing Machines', async () => {
    let looked = false;
    const verdicts = await provider('same-cluster').verifyNodeIdentity(
      [{ nodeName: 'n', providerID: 'i-0123' }],
      () => {
        looked = true;
        return Promise.resolve({ machines: [], fleetDeployments: new Set() });
      },
    );
    expect(verdicts).toEqual([
      expect.objectContaining({ verified: false, reason: 'InvalidProviderID' }),
    ]);
    expect(looked).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
} from '@fleet/cloud-provider';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const VAP = 'admissionregistration.k8s.io/v1';
const NODECLASS = 'karpenter.k8s.aws/v1';
const KARPENTER = ['autoscaling.openshift.io/v1alpha1', 'Karpenter', 'default'] as const;

/**
 * The karpenter-operator enhancement's ValidatingAdmissionPolicy, through the emulator's VAP
 * support (policies and bindings evaluated with CEL on every write, as the API server does).
 */
describe('standalone AWS: admission policies protect what the fleet enforces', () => {
  let h: Harness;
  let sim: NodeLaunchSimulator;
  const sre = { username: 'alice', groups: ['system:authenticated', 'cluster-admins'] };

  beforeAll(async () => {
    h = await startHarness({ requeueMs: 1_000 });
    sim = new NodeLaunchSimulator({ kube: h.cluster.kube, ec2: h.cluster.ec2 }).start();
    // An administrator: cluster-admin through RBAC, yet still subject to admission policies.
    h.cluster.kube.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-cluster-admin' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cluster-admin',
      },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    });
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
  });
  afterAll(async () => {
    sim?.stop();
    await h?.stop();
  });

  it('are created with Karpenter, exempting only the sidecar user', () => {
    for (const name of [
      'karpenter-fleet-ec2nodeclass-enforced-fields',
      'karpenter-fleet-karpenter-cr',
    ]) {
      const policy = h.cluster.kube.get(VAP, 'ValidatingAdmissionPolicy', name);
      // Owned by the fleet, so disabling Karpenter prunes it.
      expect(policy?.metadata?.labels).toMatchObject({ [MANAGED_BY_LABEL]: MANAGED_BY_VALUE });
      expect(
        JSON.stringify((policy?.spec as { matchConditions?: unknown }).matchConditions),
      ).toContain(h.cluster.sidecarUser);
      expect(h.cluster.kube.get(VAP, 'ValidatingAdmissionPolicyBinding', name)?.spec).toEqual({
        policyName: name,
        validationActions: ['Deny'],
      });
    }
  });

  it('refuses anyone else changing amiFamily, amiSelectorTerms or userData; other fields stay open', () => {
    const alice = h.cluster.kube.as(sre);
    const before = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!;
    for (const [field, value] of [
      ['amiFamily', 'AL2023'],
      ['amiSelectorTerms', [{ alias: 'al2023@latest' }]],
      ['userData', 'not ignition'],
    ] as const) {
      expect(() =>
        alice.patch(NODECLASS, 'EC2NodeClass', 'default', undefined, { spec: { [field]: value } }),
      ).toThrow(
        new RegExp(
          `ValidatingAdmissionPolicy 'karpenter-fleet-ec2nodeclass-enforced-fields' with binding 'karpenter-fleet-ec2nodeclass-enforced-fields' denied request: spec.${field} is set by the Karpenter fleet`,
        ),
      );
    }
    // Removing a field is a change too.
    expect(() =>
      alice.patch(NODECLASS, 'EC2NodeClass', 'default', undefined, { spec: { userData: null } }),
    ).toThrow(/spec.userData is set by the Karpenter fleet/);
    const after = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!;
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);

    alice.patch(NODECLASS, 'EC2NodeClass', 'default', undefined, {
      metadata: { annotations: { 'example.com/owner': 'sre' } },
    });
    // Karpenter's own status writes are not matched (main resource only).
    expect(sim.markNodeClassReady('default').status).toMatchObject({
      conditions: expect.arrayContaining([
        expect.objectContaining({ type: 'Ready', status: 'True' }),
      ]) as unknown,
    });
  });

  it('lets a user create a NodeClass, which the sidecar then corrects (its own update is exempt)', async () => {
    const alice = h.cluster.kube.as(sre);
    alice.create(
      {
        apiVersion: NODECLASS,
        kind: 'EC2NodeClass',
        metadata: { name: 'batch' },
        spec: {
          amiFamily: 'AL2023',
          amiSelectorTerms: [{ alias: 'al2023@latest' }],
          role: 'KarpenterNodeRole',
          subnetSelectorTerms: [{ id: 'subnet-0123456789abcdef0' }],
          securityGroupSelectorTerms: [{ id: 'sg-0123456789abcdef0' }],
        },
      },
      { fieldManager: 'kubectl' },
    );
    const reference = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!.spec as Record<
      string,
      unknown
    >;
    const fixed = await until(() => {
      const spec = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'batch')?.spec as
        Record<string, unknown> | undefined;
      return spec?.amiFamily === 'Custom' ? spec : undefined;
    }, 'the sidecar to correct the new NodeClass');
    expect(fixed).toMatchObject({
      amiSelectorTerms: reference.amiSelectorTerms,
      // Each NodeClass boots from its own MachineConfigPool: the default's pointer, moved.
      userData: String(reference.userData).replace(
        '/config/karpenter-default',
        '/config/karpenter-batch',
      ),
    });
  });

  it('refuses deleting the Karpenter CR while Karpenter is enabled', () => {
    const alice = h.cluster.kube.as(sre);
    expect(() => alice.delete(...KARPENTER)).toThrow(
      /ValidatingAdmissionPolicy 'karpenter-fleet-karpenter-cr' with binding 'karpenter-fleet-karpenter-cr' denied request: Karpenter is enabled on this cluster by the Karpenter fleet/,
    );
    expect(h.cluster.kube.get(...KARPENTER)).toBeDefined();
  });

  it('go when Karpenter is disabled, and the sidecar removes the Karpenter CR itself', async () => {
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    await h.runtime.apply(h.order({ enabled: false }));
    await until(
      () =>
        h.runtime
          .lastResult()
          ?.result.conditions.find(
            (c) => c.type === 'Available' && c.reason === 'KarpenterDisabled',
          ),
      'Karpenter to be disabled',
      20_000,
    );
    expect(h.cluster.kube.list(VAP, 'ValidatingAdmissionPolicy')).toEqual([]);
    expect(h.cluster.kube.list(VAP, 'ValidatingAdmissionPolicyBinding')).toEqual([]);
    expect(h.cluster.kube.get(...KARPENTER)).toBeUndefined();
  });
});

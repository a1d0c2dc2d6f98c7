import { describe, expect, it } from '@jest/globals';
import { hostedFixtureObjects } from '@fleet/testing';
import { InMemoryClusterObjectReader } from '../cluster-reader.js';
import { discoverHostedAws, observeHostedMode } from './discover.js';

type Obj = Record<string, unknown> & {
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

const NS = 'clusters-alpha';
const fixture = () => hostedFixtureObjects() as Obj[];
const withHcp = (edit: (hcp: Obj) => void) =>
  fixture().map((o) => {
    if (o.kind !== 'HostedControlPlane') return o;
    const copy = structuredClone(o);
    edit(copy);
    return copy;
  });
const discover = (objects: unknown[]) =>
  discoverHostedAws({ reader: new InMemoryClusterObjectReader(objects), hcpNamespace: NS });

describe('discoverHostedAws', () => {
  it('reads the fixture HostedControlPlane', async () => {
    const result = await discover(fixture());
    expect(result).toEqual({
      ok: true,
      infrastructure: {
        hcpNamespace: NS,
        hcpName: 'alpha',
        hostedCluster: { namespace: 'clusters', name: 'alpha' },
        infraID: 'alpha-k7m2x',
        region: 'us-west-2',
        release: {
          desiredVersion: '4.21.3',
          desiredImage: 'quay.io/openshift-release-dev/ocp-release:4.21.3-x86_64',
          updating: false,
          installing: false,
        },
        autoNodeStatus: {},
        instanceProfile: 'alpha-k7m2x-karpenter-worker',
        resourceTags: [{ key: 'cost-center', value: '5120' }],
        controlPlaneEndpoint: 'https://api.alpha.hcp.example.com:443',
        deleting: false,
        finalizers: [],
      },
      conditions: [
        expect.objectContaining({ type: 'HostedControlPlaneDiscovered', reason: 'AsExpected' }),
      ],
    });
  });

  it('reads spec.autoNode, status.autoNode and an upgrade in progress', async () => {
    const result = await discover(
      withHcp((hcp) => {
        hcp.spec!.autoNode = {
          provisionerConfig: {
            name: 'Karpenter',
            karpenter: { platform: 'AWS', aws: { roleARN: 'arn:aws:iam::111122223333:role/k' } },
          },
        };
        const status = hcp.status as { versionStatus: { history: Record<string, unknown>[] } };
        status.versionStatus.history.unshift({ version: '4.21.4', state: 'Partial' });
        (hcp.status as Record<string, unknown>).autoNode = { nodeCount: 2, nodeClaimCount: 3 };
      }),
    );
    expect(result.ok && result.infrastructure.autoNode).toEqual({
      provisioner: 'Karpenter',
      platform: 'AWS',
      roleARN: 'arn:aws:iam::111122223333:role/k',
    });
    expect(result.ok && result.infrastructure.autoNodeStatus).toEqual({
      nodeCount: 2,
      nodeClaimCount: 3,
    });
    expect(result.ok && result.conditions?.[0]?.reason).toBe('ControlPlaneUpdating');
  });

  it('a first Partial entry with no Completed one before it is the install, not an upgrade (issue 42, point 12)', async () => {
    const result = await discover(
      withHcp((hcp) => {
        const status = hcp.status as { versionStatus: { history: Record<string, unknown>[] } };
        status.versionStatus.history = [{ version: '4.21.3', state: 'Partial' }];
      }),
    );
    expect(result.ok && result.infrastructure.release).toMatchObject({
      updating: false,
      installing: true,
    });
    expect(result.ok && result.conditions?.[0]?.reason).toBe('ControlPlaneInstalling');
    expect(result.ok && result.conditions?.[0]?.message).toMatch(
      /, release 4\.21\.\d+ \(installing\)$/,
    );
  });

  it.each<[string, (hcp: Obj) => void, string, RegExp]>([
    [
      'no HostedCluster annotation',
      (h) => delete h.metadata!.annotations!['hypershift.openshift.io/cluster'],
      'HostedClusterReferenceMissing',
      /metadata.annotations\["hypershift.openshift.io\/cluster"\] must be <namespace>\/<name>/,
    ],
    [
      'a malformed HostedCluster annotation',
      (h) => (h.metadata!.annotations!['hypershift.openshift.io/cluster'] = 'alpha'),
      'HostedClusterReferenceMissing',
      /not "alpha"/,
    ],
    [
      'another platform',
      (h) => ((h.spec!.platform as Record<string, unknown>).type = 'Azure'),
      'UnsupportedPlatform',
      /spec.platform.type is Azure/,
    ],
    ['no infraID', (h) => delete h.spec!.infraID, 'InfraIDMissing', /spec.infraID is empty/],
    [
      'no region',
      (h) =>
        delete ((h.spec!.platform as Record<string, unknown>).aws as Record<string, unknown>)
          .region,
      'RegionMissing',
      /spec.platform.aws.region is empty/,
    ],
  ])('%s: a Degraded reason naming the field', async (_what, edit, reason, message) => {
    const result = await discover(withHcp(edit));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe(reason);
      expect(result.message).toMatch(/^HostedControlPlane clusters-alpha\/alpha: /);
      expect(result.message).toMatch(message);
    }
  });

  it('no HostedControlPlane, or two, in the namespace', async () => {
    const none = await discover(fixture().filter((o) => o.kind !== 'HostedControlPlane'));
    expect(none).toEqual({
      ok: false,
      reason: 'HostedControlPlaneNotFound',
      message: 'no HostedControlPlane in namespace clusters-alpha',
    });
    const hcp = fixture().find((o) => o.kind === 'HostedControlPlane')!;
    const two = await discover([
      ...fixture(),
      { ...structuredClone(hcp), metadata: { ...hcp.metadata, name: 'beta' } },
    ]);
    expect(two.ok || two.reason).toBe('MultipleHostedControlPlanes');
  });

  it('a failed read is KubernetesLookupFailed, never a throw', async () => {
    const reader = new InMemoryClusterObjectReader([]);
    reader.listObjects = () => Promise.reject(new Error('connection refused'));
    const result = await discoverHostedAws({ reader, hcpNamespace: NS });
    expect(result).toEqual({
      ok: false,
      reason: 'KubernetesLookupFailed',
      message:
        'reading HostedControlPlanes in namespace clusters-alpha failed: Error: connection refused',
    });
  });
});

describe('observeHostedMode', () => {
  const deployment = (name: string, available: number) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: { replicas: 1 },
    status: { availableReplicas: available, updatedReplicas: available },
  });

  it('sees HyperShift’s karpenter-operator and operand, and spec.autoNode', async () => {
    const reader = new InMemoryClusterObjectReader([
      deployment('karpenter-operator', 1),
      deployment('karpenter', 0),
    ]);
    expect(await observeHostedMode(reader, NS, { autoNode: { provisioner: 'Karpenter' } })).toEqual(
      {
        hypershiftOperator: true,
        operand: { replicas: 1, availableReplicas: 0, updatedReplicas: 0 },
        autoNodeConfigured: true,
      },
    );
    expect(await observeHostedMode(new InMemoryClusterObjectReader([]), NS, {})).toEqual({
      hypershiftOperator: false,
      autoNodeConfigured: false,
    });
  });
});

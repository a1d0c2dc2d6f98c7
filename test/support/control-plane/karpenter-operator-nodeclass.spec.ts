import { describe, expect, it } from '@jest/globals';
import { readYamlFile } from '../kube-apiserver/index.js';
import { fixtureClusterDir } from '../fixtures.js';
import {
  amiSelectorTerms,
  currentClusterVersion,
  derivedEc2NodeClassSpec,
  formatGoDuration,
  karpenterSubnetIDs,
  kubeletConfigManifest,
  kubeletIsZero,
  mergeTags,
  mirroredStatus,
  parseGoDuration,
  setStatusCondition,
  statusMergePatch,
  versionStatus,
  type Condition,
  type HostedControlPlaneView,
  type OpenshiftEC2NodeClassSpec,
} from './karpenter-operator-nodeclass.js';

// HyperShift's karpenter-operator at 3ee9615567ac, function by function
// (test/support/hypershift-stand-ins.README.md): what the stand-in derives and mirrors.

const [fixtureHcp] = readYamlFile(
  `${fixtureClusterDir('hcp-aws-hosted')}/hostedcontrolplane.yaml`,
) as unknown as HostedControlPlaneView[];
const hcp = fixtureHcp!;
const secret = {
  metadata: { labels: { 'hypershift.openshift.io/ami': 'ami-0123' } },
  data: { value: Buffer.from('{"ignition":{}}').toString('base64') },
};
const derive = (spec: OpenshiftEC2NodeClassSpec, platform: HostedControlPlaneView = hcp) =>
  derivedEc2NodeClassSpec({ spec }, platform, secret);
const withTags = (
  resourceTags: { key: string; value: string; overridePolicy?: string }[],
): HostedControlPlaneView => ({
  ...hcp,
  spec: { ...hcp.spec, platform: { type: 'AWS', aws: { resourceTags } } },
});

describe('reconcileEC2NodeClass (ec2_nodeclass_controller.go, karpenter_util.go)', () => {
  it('the fleet’s class without overrides: user data and AMI from the Secret, the HCP’s tags and instance profile, the default root volume and selectors, nothing else', () => {
    expect(derive({})).toEqual({
      userData: '{"ignition":{}}',
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: 'ami-0123' }],
      tags: { 'cost-center': '5120' },
      instanceProfile: 'alpha-k7m2x-karpenter-worker',
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          ebs: { volumeSize: '120Gi', volumeType: 'gp3', encrypted: true },
        },
      ],
      subnetSelectorTerms: [
        {
          tags: {
            'kubernetes.io/role/internal-elb': '1',
            'kubernetes.io/cluster/alpha-k7m2x': '*',
          },
        },
      ],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'alpha-k7m2x' } }],
    });
  });

  it('block device mappings converted from HyperShift’s BlockDevice: GiB to a quantity, enums to booleans and lowercase, an empty ebs still sent; none given takes the default', () => {
    const spec = derive({
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          rootVolume: 'RootVolume',
          ebs: {
            volumeSizeGiB: 200,
            volumeType: 'IO2',
            iops: 6000,
            throughput: 250,
            encrypted: 'Encrypted',
            kmsKeyID: 'arn:aws:kms:us-west-2:111122223333:key/k',
            deleteOnTermination: 'Retain',
          },
        },
        {
          deviceName: '/dev/xvdb',
          rootVolume: 'NotRootVolume',
          ebs: { snapshotID: 'snap-1', encrypted: 'Unencrypted', deleteOnTermination: 'Delete' },
        },
        { deviceName: '' },
      ],
    });
    expect(spec.blockDeviceMappings).toEqual([
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: {
          volumeSize: '200Gi',
          volumeType: 'io2',
          iops: 6000,
          throughput: 250,
          encrypted: true,
          kmsKeyID: 'arn:aws:kms:us-west-2:111122223333:key/k',
          deleteOnTermination: false,
        },
      },
      {
        deviceName: '/dev/xvdb',
        ebs: { snapshotID: 'snap-1', encrypted: false, deleteOnTermination: true },
      },
      { ebs: {} },
    ]);
    expect(derive({ blockDeviceMappings: [] }).blockDeviceMappings).toEqual(
      derive({}).blockDeviceMappings,
    );
  });

  it('capacity reservations, instance store, public IP, monitoring and metadata options in Karpenter’s words; unset stays unset for the CRD to default', () => {
    expect(
      derive({
        capacityReservationSelectorTerms: [
          { id: 'cr-1', instanceMatchCriteria: 'Targeted' },
          { tags: { team: 'a' }, ownerID: '111122223333', instanceMatchCriteria: 'Open' },
        ],
        instanceStorePolicy: 'RAID0',
        ipAddressAssociation: 'Public',
        monitoring: 'Detailed',
        metadataOptions: {
          access: 'None',
          httpIPProtocol: 'IPv6',
          httpPutResponseHopLimit: 2,
          httpTokens: 'Optional',
        },
      }),
    ).toMatchObject({
      capacityReservationSelectorTerms: [
        { id: 'cr-1', instanceMatchCriteria: 'targeted' },
        { tags: { team: 'a' }, ownerID: '111122223333', instanceMatchCriteria: 'open' },
      ],
      instanceStorePolicy: 'RAID0',
      associatePublicIPAddress: true,
      detailedMonitoring: true,
      metadataOptions: {
        httpEndpoint: 'disabled',
        httpProtocolIPv6: 'enabled',
        httpPutResponseHopLimit: 2,
        httpTokens: 'optional',
      },
    });
    expect(
      derive({
        ipAddressAssociation: 'SubnetDefault',
        monitoring: 'Basic',
        metadataOptions: { httpTokens: 'Required' },
      }),
    ).toMatchObject({
      associatePublicIPAddress: false,
      detailedMonitoring: false,
      metadataOptions: { httpTokens: 'required' },
    });
    const plain = derive({ metadataOptions: {} });
    for (const field of [
      'capacityReservationSelectorTerms',
      'instanceStorePolicy',
      'associatePublicIPAddress',
      'detailedMonitoring',
      'metadataOptions',
      'kubelet',
    ])
      expect(plain).not.toHaveProperty(field);
  });

  it('kubelet: the typed fields only (overflow goes to the ConfigMap, not the EC2NodeClass), grace periods as Go prints durations, unparsable ones dropped', () => {
    expect(
      derive({
        kubelet: {
          maxPods: 110,
          podsPerCore: 0,
          cpuCFSQuota: false,
          imageGCHighThresholdPercent: 0,
          evictionHard: { 'memory.available': '5%' },
          evictionSoft: { 'memory.available': '10%', 'nodefs.available': '15%' },
          evictionSoftGracePeriod: { 'memory.available': '90s', 'nodefs.available': 'soon' },
          systemReserved: { cpu: '500m' },
          imageMinimumGCAge: '5m',
          containerLogMaxSize: '50Mi',
        },
      }).kubelet,
    ).toEqual({
      maxPods: 110,
      cpuCFSQuota: false,
      imageGCHighThresholdPercent: 0,
      evictionHard: { 'memory.available': '5%' },
      evictionSoft: { 'memory.available': '10%', 'nodefs.available': '15%' },
      evictionSoftGracePeriod: { 'memory.available': '1m30s' },
      systemReserved: { cpu: '500m' },
    });
    expect(derive({ kubelet: { containerLogMaxSize: '50Mi' } })).not.toHaveProperty('kubelet');
    expect(kubeletIsZero({ containerLogMaxSize: '50Mi' })).toBe(false);
    expect(kubeletIsZero({})).toBe(true);
    expect(kubeletIsZero(undefined)).toBe(true);
  });

  it('selector terms given are converted term by term (unknown fields dropped); absent ones take the cluster’s defaults', () => {
    expect(
      derive({
        subnetSelectorTerms: [{ id: 'subnet-1' }, { tags: { tier: 'private' } }],
        securityGroupSelectorTerms: [{ name: 'nodes', extra: 'x' } as { name: string }],
      }),
    ).toMatchObject({
      subnetSelectorTerms: [{ id: 'subnet-1' }, { tags: { tier: 'private' } }],
      securityGroupSelectorTerms: [{ name: 'nodes' }],
    });
  });

  it('tags: the HostedCluster’s win unless their overridePolicy is Allow; Karpenter’s restricted tags dropped; none at all is no tags field', () => {
    const platform = withTags([
      { key: 'cost-center', value: '5120' },
      { key: 'env', value: 'prod', overridePolicy: 'Allow' },
      { key: 'kubernetes.io/cluster/alpha-k7m2x', value: 'owned' },
    ]);
    expect(mergeTags({ 'cost-center': '9999', env: 'dev', team: 'a' }, platform)).toEqual({
      'cost-center': '5120',
      env: 'dev',
      team: 'a',
    });
    expect(mergeTags(undefined, withTags([{ key: 'karpenter.sh/nodepool', value: 'x' }]))).toBe(
      undefined,
    );
    expect(derive({}, withTags([]))).not.toHaveProperty('tags');
  });

  it('AMI selector terms: one per architecture label on the Secret (amd64 first); none, or a platform other than AWS, fails the reconcile', () => {
    expect(
      amiSelectorTerms(
        {
          'hypershift.openshift.io/ami-arm64': 'ami-arm',
          'hypershift.openshift.io/ami': 'ami-x86',
        },
        'AWS',
      ),
    ).toEqual([{ id: 'ami-x86' }, { id: 'ami-arm' }]);
    expect(() => amiSelectorTerms({}, 'AWS')).toThrow(
      'no AMIs found for supported architectures: [amd64 arm64]',
    );
    expect(() => amiSelectorTerms({ 'hypershift.openshift.io/ami': 'a' }, 'Azure')).toThrow(
      'unsupported platform: Azure',
    );
  });
});

const karpenterStatus = {
  subnets: [
    { id: 'subnet-2', zone: 'us-west-2b', zoneID: 'usw2-az2' },
    { id: 'subnet-1', zone: 'us-west-2a' },
  ],
  securityGroups: [{ id: 'sg-1', name: 'alpha-default-sg' }],
  capacityReservations: [
    {
      availabilityZone: 'us-west-2a',
      id: 'cr-1',
      instanceMatchCriteria: 'targeted',
      instanceType: 'm5.large',
      ownerID: '111122223333',
      reservationType: 'capacity-block',
      state: 'expiring',
      endTime: '2027-01-01T00:00:00Z',
    },
  ],
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      observedGeneration: 3,
      lastTransitionTime: '2026-12-01T00:00:00Z',
      reason: 'Ready',
      message: '',
    },
  ],
};
const condition = (cs: Condition[] | undefined, type: string) => cs?.find((c) => c.type === type);

describe('reconcileStatus and computeReadyCondition (ec2_nodeclass_controller.go)', () => {
  it('subnets, security groups and capacity reservations copied in HyperShift’s enums; Karpenter’s conditions set as they are', () => {
    const resolved = versionStatus({ metadata: { generation: 2 } }, hcp).status;
    const status = mirroredStatus(
      { metadata: { generation: 2 }, status: resolved },
      karpenterStatus,
      hcp,
    );
    expect(status).toMatchObject({
      // The same fields on both sides, in Karpenter's order.
      subnets: karpenterStatus.subnets,
      securityGroups: karpenterStatus.securityGroups,
      capacityReservations: [
        {
          availabilityZone: 'us-west-2a',
          id: 'cr-1',
          instanceMatchCriteria: 'Targeted',
          instanceType: 'm5.large',
          ownerID: '111122223333',
          reservationType: 'CapacityBlock',
          state: 'Expiring',
          endTime: '2027-01-01T00:00:00Z',
        },
      ],
      releaseImage: 'quay.io/openshift-release-dev/ocp-release:4.21.3-x86_64',
      version: '4.21.3',
    });
    // Ready is Karpenter's, with its own generation and transition time.
    expect(condition(status.conditions, 'Ready')).toEqual(karpenterStatus.conditions[0]);
    expect(status.conditions?.map((c) => c.type)).toEqual([
      'SupportedVersionSkew',
      'VersionResolved',
      'Ready',
    ]);
  });

  it('Ready is False while VersionResolved is not True, whatever Karpenter says; unknown without one', () => {
    const unknown = mirroredStatus({ metadata: { generation: 4 } }, karpenterStatus, hcp);
    expect(condition(unknown.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ResolutionFailed',
      message: 'Version resolution status is unknown',
      observedGeneration: 4,
    });
    const failed = versionStatus({ metadata: { generation: 4 }, spec: { version: '4.20.1' } }, hcp);
    expect(failed.resolved).toBe(false);
    expect(failed.status).toEqual({
      version: '4.20.1',
      conditions: [
        expect.objectContaining({
          type: 'VersionResolved',
          status: 'False',
          reason: 'ResolutionFailed',
          message: expect.stringMatching(/^Failed to resolve version "4\.20\.1": /) as unknown,
        }),
      ],
    });
    const ready = mirroredStatus(
      { metadata: { generation: 4 }, status: failed.status },
      karpenterStatus,
      hcp,
    );
    expect(condition(ready.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ResolutionFailed',
      message: expect.stringMatching(/^Version resolution failed: Failed to resolve/) as unknown,
    });
  });

  it('AWSResourceTagConflict counts the class’s tags the HostedCluster blocks or lets override; gone when either side has none', () => {
    const platform = withTags([
      { key: 'cost-center', value: '5120' },
      { key: 'env', value: 'prod', overridePolicy: 'Allow' },
    ]);
    const status = (tags: Record<string, string> | undefined, p = platform) =>
      condition(
        mirroredStatus({ metadata: { generation: 1 }, spec: { tags } }, {}, p).conditions,
        'AWSResourceTagConflict',
      );
    expect(status({ 'cost-center': '1', env: 'dev' })).toMatchObject({
      status: 'True',
      reason: 'TagConflictDetected',
      message:
        '1 AWS resource tag conflict(s) detected; HostedCluster values preserved (override not allowed); 1 override(s) applied (allowed by HostedCluster)',
    });
    expect(status({ env: 'dev' })).toMatchObject({
      status: 'False',
      reason: 'NoTagConflict',
      message:
        '1 AWS resource tag override(s) applied; nodeclass values used (allowed by HostedCluster)',
    });
    expect(status({ 'cost-center': '5120', team: 'a' })).toMatchObject({
      status: 'False',
      message: 'No AWS resource tag conflicts detected',
    });
    expect(status(undefined)).toBeUndefined();
    expect(status({ team: 'a' }, withTags([]))).toBeUndefined();
  });

  it('SetStatusCondition keeps lastTransitionTime while the status holds, moves it when the status changes', () => {
    const conditions: Condition[] = [
      { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: 't0' },
    ];
    expect(
      setStatusCondition(conditions, {
        type: 'Ready',
        status: 'True',
        reason: 'Other',
        message: 'm',
        lastTransitionTime: 't1',
      }),
    ).toBe(true);
    expect(conditions[0]).toMatchObject({ reason: 'Other', lastTransitionTime: 't0' });
    setStatusCondition(conditions, { type: 'Ready', status: 'False', reason: 'R', message: '' });
    expect(conditions[0]!.lastTransitionTime).not.toBe('t0');
  });

  it('the version the class reports is the newest Completed history entry, else the desired one', () => {
    const at = (history: { version: string; state: string; completionTime?: string }[]) =>
      currentClusterVersion({
        ...hcp,
        status: { versionStatus: { desired: { version: '4.22.0' }, history } },
      });
    expect(
      at([
        { version: '4.22.0', state: 'Partial' },
        { version: '4.21.3', state: 'Completed', completionTime: '2026-11-02T10:41:00Z' },
        { version: '4.21.9', state: 'Completed', completionTime: '2026-12-02T10:41:00Z' },
      ]),
    ).toBe('4.21.9');
    expect(at([{ version: '4.22.0', state: 'Partial' }])).toBe('4.22.0');
  });

  it('the status is written as a merge patch of what changed (a list replaced whole, a field gone nulled), nothing when nothing did', () => {
    expect(statusMergePatch({ subnets: [{ id: 'a' }], version: '1' }, { version: '1' })).toEqual({
      subnets: null,
    });
    expect(statusMergePatch({ version: '1' }, { version: '1' })).toBeUndefined();
  });
});

describe('reconcileKarpenterSubnetsConfigMap and reconcileKubeletConfigMap', () => {
  it('the subnets of every class not being deleted, unique and sorted; none is no ConfigMap', () => {
    expect(
      karpenterSubnetIDs([
        { status: { subnets: [{ id: 'subnet-b' }, { id: 'subnet-a' }] } },
        { status: { subnets: [{ id: 'subnet-a' }, { zone: 'x' }] } },
        {
          metadata: { deletionTimestamp: '2026-12-01T00:00:00Z' },
          status: { subnets: [{ id: 'subnet-c' }] },
        },
      ]),
    ).toEqual(['subnet-a', 'subnet-b']);
    expect(karpenterSubnetIDs([{ status: {} }])).toBeUndefined();
  });

  it('the kubelet ConfigMap holds the whole kubelet, overflow included, with the Karpenter taint merged last', () => {
    expect(
      kubeletConfigManifest('karpenter-fleet', {
        maxPods: 110,
        podsPerCore: 0,
        containerLogMaxSize: '50Mi',
        registerWithTaints: [],
      }),
    ).toBe(
      [
        'apiVersion: machineconfiguration.openshift.io/v1',
        'kind: KubeletConfig',
        'metadata:',
        '  name: karpenter-kubelet-karpenter-fleet',
        'spec:',
        '  kubeletConfig:',
        '    containerLogMaxSize: 50Mi',
        '    maxPods: 110',
        '    registerWithTaints:',
        '    - effect: NoExecute',
        '      key: karpenter.sh/unregistered',
        '      value: "true"',
      ].join('\n'),
    );
  });
});

describe("Go's time.Duration, as the grace periods go through it", () => {
  it.each([
    ['90s', '1m30s'],
    ['1h', '1h0m0s'],
    ['1.5h', '1h30m0s'],
    ['2m0.5s', '2m0.5s'],
    ['300ms', '300ms'],
    ['1500us', '1.5ms'],
    ['1µs', '1µs'],
    ['0', '0s'],
    ['-45s', '-45s'],
    ['+1m', '1m0s'],
  ])('%s prints as %s', (text, printed) => {
    expect(formatGoDuration(parseGoDuration(text)!)).toBe(printed);
  });

  it.each(['', '10', 'soon', '.s', '1d', '9999999999h'])('%j does not parse', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});

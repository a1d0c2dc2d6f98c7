import { describe, expect, it } from '@jest/globals';
import type { KarpenterDesiredState } from '@fleet/contracts';
import type { HostedAwsInfrastructure } from '@fleet/discovery';
import { CRDS_DIR, HOSTED, hostedFixtureObjects, loadCrdValidator } from '@fleet/testing';
import { renderFeatureGates } from '../feature-gates.js';
import type { KubeObject } from '../types.js';
import {
  CONVERGED_OPERAND_NAME,
  DERIVED_FROM_LABEL,
  NodeClassNotReadyError,
  deriveEC2NodeClass,
  findUserDataSecret,
  mergeHostedTags,
  renderConvergedOperand,
  renderDerivedNodeClassPolicy,
} from './converged.js';

const ec2NodeClassCrd = loadCrdValidator(
  `${CRDS_DIR}karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml`,
);
const openshiftNodeClassCrd = loadCrdValidator(
  `${CRDS_DIR}karpenter/karpenter.hypershift.openshift.io_openshiftec2nodeclasses.yaml`,
);

const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
const infra: HostedAwsInfrastructure = {
  hcpNamespace: HOSTED.hcpNamespace,
  hcpName: HOSTED.hostedCluster.name,
  hostedCluster: { ...HOSTED.hostedCluster },
  infraID: HOSTED.infraID,
  region: HOSTED.region,
  release: { desiredVersion: '4.21.3', updating: false },
  autoNodeStatus: {},
  instanceProfile: 'alpha-k7m2x-karpenter-worker',
  resourceTags: [
    { key: 'cost-center', value: '5120' },
    { key: 'team', value: 'platform', overridePolicy: 'Allow' },
  ],
  controlPlaneEndpoint: 'https://api.alpha.hcp.example.com:443',
  deleting: false,
  finalizers: [],
};
const desired: KarpenterDesiredState = {
  enabled: true,
  paused: false,
  clusterAutoscalerMode: 'KEEP',
  logLevel: 'debug',
  featureGates: { spotToSpotConsolidation: true },
  nodePools: [],
  nodeClassOverrides: {},
  webIdentityRoleArn: ROLE,
};
const options = {
  image: 'quay.io/example/karpenter@sha256:' + 'a'.repeat(64),
  tokenMinterImage: 'quay.io/example/cpo@sha256:' + 'b'.repeat(64),
  proxy: { httpsProxy: 'http://proxy.mgmt:3128', noProxy: '.cluster.local' },
};

const userDataSecret = () =>
  hostedFixtureObjects().find(
    (o) => o.kind === 'Secret' && o.metadata?.name === 'user-data-default-karpenter-3f9a1c',
  ) as KubeObject;
const openshiftNodeClass = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'karpenter.hypershift.openshift.io/v1',
  kind: 'OpenshiftEC2NodeClass',
  metadata: { name },
  spec,
});

describe('converged operand', () => {
  const rendered = renderConvergedOperand(infra, desired, ROLE, options);
  const deployment = rendered.find((t) => t.object.kind === 'Deployment')!;
  const pod = (deployment.object.spec as { template: { spec: Record<string, unknown> } }).template
    .spec;
  const container = (pod.containers as { env: { name: string; value?: string }[] }[])[0]!;
  const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));

  it('runs in the HCP namespace with the guest kubeconfig, webhook and leader election off', () => {
    expect(deployment.target).toBe('management');
    expect(deployment.object.metadata).toEqual(
      expect.objectContaining({ name: CONVERGED_OPERAND_NAME, namespace: HOSTED.hcpNamespace }),
    );
    expect((deployment.object.spec as { replicas: number }).replicas).toBe(1);
    expect(env).toEqual(
      expect.objectContaining({
        KUBECONFIG: '/mnt/kubeconfig/target-kubeconfig',
        DISABLE_WEBHOOK: 'true',
        DISABLE_LEADER_ELECTION: 'true',
        CLUSTER_NAME: HOSTED.infraID,
        CLUSTER_ENDPOINT: 'https://api.alpha.hcp.example.com:443',
        AWS_REGION: HOSTED.region,
        AWS_ROLE_ARN: ROLE,
        AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/openshift/serviceaccount/token',
        FEATURE_GATES: renderFeatureGates(desired.featureGates),
        HTTPS_PROXY: 'http://proxy.mgmt:3128',
        NO_PROXY: '.cluster.local',
      }),
    );
    expect(env).not.toHaveProperty('HTTP_PROXY');
    expect((container as unknown as { args: string[] }).args).toEqual(['--log-level=debug']);
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'target-kubeconfig',
          secret: expect.objectContaining({
            secretName: `${HOSTED.infraID}-kubeconfig`,
          }) as unknown,
        }),
      ]),
    );
    // The token-minter keeps the guest ServiceAccount's token where the AWS SDK reads it.
    expect(pod.initContainers).toEqual([
      expect.objectContaining({
        name: 'token-minter',
        image: options.tokenMinterImage,
        restartPolicy: 'Always',
        args: expect.arrayContaining([
          '--service-account-namespace=kube-system',
          '--service-account-name=karpenter',
        ]) as unknown,
      }),
    ]);
  });

  it('writes no Secret and puts the guest identity and RBAC in the guest', () => {
    expect(rendered.some((t) => t.object.kind === 'Secret')).toBe(false);
    const guest = rendered.filter((t) => t.target === 'workload').map((t) => t.object.kind);
    expect(guest).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'Role',
      'RoleBinding',
    ]);
    const role = rendered.find((t) => t.object.kind === 'ClusterRole')!.object as unknown as {
      rules: { apiGroups: string[]; resources: string[] }[];
    };
    expect(role.rules.some((r) => r.resources.includes('ec2nodeclasses'))).toBe(true);
  });

  it('pauses at zero replicas', () => {
    const paused = renderConvergedOperand(infra, { ...desired, paused: true }, ROLE, options);
    const d = paused.find((t) => t.object.kind === 'Deployment')!.object;
    expect((d.spec as { replicas: number }).replicas).toBe(0);
  });
});

describe('EC2NodeClass derivation', () => {
  it('finds the user-data Secret by HyperShift’s label and NodePool annotation, never the token Secret', () => {
    const secret = userDataSecret();
    const token: KubeObject = {
      ...secret,
      metadata: {
        ...secret.metadata,
        name: 'token-default-karpenter',
        annotations: {
          ...secret.metadata.annotations,
          'hypershift.openshift.io/ignition-config': 'true',
        },
      },
    };
    expect(findUserDataSecret('default', [token, secret])?.metadata.name).toBe(
      'user-data-default-karpenter-3f9a1c',
    );
    expect(findUserDataSecret('gpu', [token, secret])).toBeUndefined();
  });

  it('derives AMI, user data, selectors, root disk, instance profile and tags as HyperShift does', () => {
    const derived = deriveEC2NodeClass(openshiftNodeClass('default'), userDataSecret(), infra);
    expect(derived).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: {
        name: 'default',
        labels: expect.objectContaining({ [DERIVED_FROM_LABEL]: 'default' }) as unknown,
      },
      spec: {
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0rhcos4213west2001' }],
        blockDeviceMappings: [
          {
            deviceName: '/dev/xvda',
            ebs: { encrypted: true, volumeSize: '120Gi', volumeType: 'gp3' },
            rootVolume: true,
          },
        ],
        instanceProfile: 'alpha-k7m2x-karpenter-worker',
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': HOSTED.infraID } }],
        subnetSelectorTerms: [
          {
            tags: {
              'kubernetes.io/role/internal-elb': '1',
              [`kubernetes.io/cluster/${HOSTED.infraID}`]: '*',
            },
          },
        ],
        tags: { 'cost-center': '5120', team: 'platform' },
        userData: expect.stringContaining('ignition-server-clusters-alpha') as unknown,
      },
    });
    expect(ec2NodeClassCrd.validate(derived).errors).toEqual([]);
  });

  it('carries an SRE’s overrides over, in EC2NodeClass terms', () => {
    const spec = {
      subnetSelectorTerms: [{ id: 'subnet-0a1' }],
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          rootVolume: 'RootVolume',
          ebs: { volumeSizeGiB: 200, volumeType: 'GP3', encrypted: 'Encrypted', iops: 4000 },
        },
      ],
      ipAddressAssociation: 'SubnetDefault',
      monitoring: 'Detailed',
      metadataOptions: { access: 'HTTPEndpoint', httpTokens: 'Required' },
      kubelet: { maxPods: 150 },
      // cost-center may not be overridden; team may.
      tags: { 'cost-center': '9999', team: 'ml', app: 'batch' },
    };
    const source = openshiftNodeClass('gpu', spec);
    expect(openshiftNodeClassCrd.validate(source).errors).toEqual([]);
    const secret = userDataSecret();
    const gpuSecret: KubeObject = {
      ...secret,
      metadata: {
        ...secret.metadata,
        labels: {
          ...secret.metadata.labels,
          'hypershift.openshift.io/ami-arm64': 'ami-0arm',
        },
        annotations: { 'hypershift.openshift.io/nodePool': 'clusters/gpu-karpenter' },
      },
    };
    const derived = deriveEC2NodeClass(
      source,
      findUserDataSecret('gpu', [secret, gpuSecret]),
      infra,
    );
    expect(derived.spec).toEqual(
      expect.objectContaining({
        amiSelectorTerms: [{ id: 'ami-0rhcos4213west2001' }, { id: 'ami-0arm' }],
        subnetSelectorTerms: [{ id: 'subnet-0a1' }],
        blockDeviceMappings: [
          {
            deviceName: '/dev/xvda',
            rootVolume: true,
            ebs: { volumeSize: '200Gi', volumeType: 'gp3', encrypted: true, iops: 4000 },
          },
        ],
        associatePublicIPAddress: false,
        detailedMonitoring: true,
        metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'required' },
        kubelet: { maxPods: 150 },
        tags: { 'cost-center': '5120', team: 'ml', app: 'batch' },
      }),
    );
    expect(ec2NodeClassCrd.validate(derived).errors).toEqual([]);
  });

  it('without its user-data Secret (or an AMI), a NodeClass is not ready, naming what is missing', () => {
    expect(() => deriveEC2NodeClass(openshiftNodeClass('gpu'), undefined, infra)).toThrow(
      NodeClassNotReadyError,
    );
    expect(() => deriveEC2NodeClass(openshiftNodeClass('gpu'), undefined, infra)).toThrow(
      /OpenshiftEC2NodeClass gpu: HyperShift has not written its user-data Secret .* NodePool gpu-karpenter/,
    );
    const secret = userDataSecret();
    const noAmi = { ...secret, metadata: { ...secret.metadata, labels: {} } };
    expect(() => deriveEC2NodeClass(openshiftNodeClass('default'), noAmi, infra)).toThrow(
      /has no AMI label/,
    );
  });

  it('tag rules: reserved keys are dropped; no NodeClass tags and no cluster tags give no tags at all', () => {
    expect(
      mergeHostedTags({ app: 'x', 'karpenter.sh/nodepool': 'y' }, [
        { key: `kubernetes.io/cluster/${HOSTED.infraID}`, value: 'owned' },
      ]),
    ).toEqual({ app: 'x' });
    expect(mergeHostedTags(undefined, [])).toBeUndefined();
    expect(mergeHostedTags({}, [])).toEqual({});
  });

  it('the admission policy exempts only the sidecar and lets unchanged specs through', () => {
    const [policy, binding] = renderDerivedNodeClassPolicy('system:hosted-cluster-config');
    expect(policy!.target).toBe('workload');
    const spec = policy!.object.spec as {
      matchConditions: { expression: string }[];
      validations: { expression: string }[];
    };
    expect(spec.matchConditions[0]!.expression).toBe(
      'request.userInfo.username != "system:hosted-cluster-config"',
    );
    expect(spec.validations[0]!.expression).toMatch(/object\.spec == oldObject\.spec/);
    expect(binding!.object.kind).toBe('ValidatingAdmissionPolicyBinding');
  });
});

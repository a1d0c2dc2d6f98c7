import type { KarpenterDesiredState } from '@fleet/contracts';
import type { HostedAwsInfrastructure } from '@fleet/discovery';
import type { V1Deployment, V1EnvVar, V1PolicyRule } from '@kubernetes/client-node';
import { AWS_CLUSTER_RULES, logLevelArg, renderFeatureGates } from '../aws/operand.js';
import {
  BOUND_SA_TOKEN_DIR,
  BOUND_SA_TOKEN_FILE,
  EC2_NODE_CLASS,
  HEALTH_PROBE_PORT,
  METRICS_PORT,
  isRestrictedTagKey,
} from '../aws/constants.js';
import { canonical } from '../canonical.js';
import { ownedLabels } from '../labels.js';
import {
  admissionPolicy,
  admissionPolicyBinding,
  notTheSidecar,
} from '../openshift/admission-policies.js';
import { operandRbac } from '../rbac.js';
import type { KubeObject, TargetedObject } from '../types.js';

/**
 * Converged mode: the sidecar does what HyperShift's karpenter-operator does (the operand in the
 * HCP namespace, the CRDs and the EC2NodeClass derivation in the guest), where HyperShift's own
 * operator is not running. Its Deployment has its own name, so it can never be mistaken for (or
 * overwritten by) HyperShift's `karpenter` Deployment.
 */
export const CONVERGED_OPERAND_NAME = 'karpenter-fleet-operand';
/** The guest ServiceAccount the operand acts as (HyperShift's token-minter mints its token). */
export const CONVERGED_GUEST_NAMESPACE = 'kube-system';
export const CONVERGED_GUEST_SERVICE_ACCOUNT = 'karpenter';
export const CONVERGED_GUEST_ROLE = 'karpenter-fleet:hosted-karpenter';
/** The operand reaches the guest with HyperShift's service-network kubeconfig of the cluster. */
export const guestKubeconfigSecretName = (infraID: string): string => `${infraID}-kubeconfig`;
const KUBECONFIG_VOLUME = 'target-kubeconfig';
const KUBECONFIG_DIR = '/mnt/kubeconfig';
const TOKEN_VOLUME = 'serviceaccount-token';

/** HyperShift's labels and annotations on the per-NodeClass user-data Secrets its pipeline writes. */
export const USER_DATA_MANAGED_LABEL = 'hypershift.openshift.io/managed-by-karpenter';
export const USER_DATA_AMI_LABEL = 'hypershift.openshift.io/ami';
export const USER_DATA_NODEPOOL_ANNOTATION = 'hypershift.openshift.io/nodePool';
/** Marks the token Secret beside the user-data Secret (same NodePool annotation); never user data. */
export const IGNITION_TOKEN_ANNOTATION = 'hypershift.openshift.io/ignition-config';
/** HyperShift's root-disk default for Karpenter nodes (karpenter-operator DefaultRootVolumeSize). */
export const DEFAULT_ROOT_VOLUME = { deviceName: '/dev/xvda', volumeSize: '120Gi' } as const;
/** Names the OpenshiftEC2NodeClass an EC2NodeClass was derived from (same name, but explicit). */
export const DERIVED_FROM_LABEL = 'fleet.karpenter.sh/openshift-ec2-nodeclass';
export const DERIVED_NODECLASS_POLICY_NAME = 'karpenter-fleet-ec2nodeclass-derived';

const operandLabels = () =>
  ownedLabels({
    'app.kubernetes.io/name': CONVERGED_OPERAND_NAME,
    'app.kubernetes.io/part-of': 'karpenter',
  });
const OPERAND_SELECTOR = { 'app.kubernetes.io/name': CONVERGED_OPERAND_NAME };

export interface ConvergedOperandOptions {
  /** The Karpenter (karpenter-provider-aws) image. */
  image: string;
  /** HyperShift's control-plane-operator image: its `token-minter` mints the guest token. */
  tokenMinterImage: string;
  /** The management cluster's proxy, as the sidecar itself is given it (HyperShift does likewise). */
  proxy?: { httpProxy?: string; httpsProxy?: string; noProxy?: string };
}

/** The operand's environment, after HyperShift's karpenter Deployment with web identity instead of a credentials file. */
export function convergedOperandEnv(
  infra: Pick<HostedAwsInfrastructure, 'infraID' | 'region' | 'controlPlaneEndpoint'>,
  desired: KarpenterDesiredState,
  roleArn: string,
  proxy: ConvergedOperandOptions['proxy'] = {},
): V1EnvVar[] {
  const proxyPairs: [string, string | undefined][] = [
    ['HTTP_PROXY', proxy.httpProxy],
    ['HTTPS_PROXY', proxy.httpsProxy],
    ['NO_PROXY', proxy.noProxy],
  ];
  return [
    { name: 'KUBECONFIG', value: `${KUBECONFIG_DIR}/${KUBECONFIG_VOLUME}` },
    {
      name: 'SYSTEM_NAMESPACE',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
    },
    // The fleet validates NodePools and NodeClasses before they are written; one replica.
    { name: 'DISABLE_WEBHOOK', value: 'true' },
    { name: 'DISABLE_LEADER_ELECTION', value: 'true' },
    { name: 'FEATURE_GATES', value: renderFeatureGates(desired.featureGates) },
    { name: 'HEALTH_PROBE_PORT', value: String(HEALTH_PROBE_PORT) },
    { name: 'CLUSTER_NAME', value: infra.infraID },
    // Karpenter asks EKS for the endpoint when none is given; a hosted cluster is not EKS.
    ...(infra.controlPlaneEndpoint
      ? [{ name: 'CLUSTER_ENDPOINT', value: infra.controlPlaneEndpoint }]
      : []),
    { name: 'AWS_REGION', value: infra.region },
    // The role, assumed with the guest token the token-minter keeps fresh.
    { name: 'AWS_ROLE_ARN', value: roleArn },
    { name: 'AWS_WEB_IDENTITY_TOKEN_FILE', value: BOUND_SA_TOKEN_FILE },
    { name: 'AWS_STS_REGIONAL_ENDPOINTS', value: 'regional' },
    ...(desired.interruptionQueue
      ? [{ name: 'INTERRUPTION_QUEUE', value: desired.interruptionQueue }]
      : []),
    ...proxyPairs.flatMap(([name, value]) => (value ? [{ name, value }] : [])),
  ];
}

function convergedDeployment(
  infra: HostedAwsInfrastructure,
  desired: KarpenterDesiredState,
  roleArn: string,
  options: ConvergedOperandOptions,
): V1Deployment {
  const kubeconfigMount = { name: KUBECONFIG_VOLUME, mountPath: KUBECONFIG_DIR, readOnly: true };
  const tokenMount = { name: TOKEN_VOLUME, mountPath: BOUND_SA_TOKEN_DIR };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: CONVERGED_OPERAND_NAME,
      namespace: infra.hcpNamespace,
      labels: operandLabels(),
    },
    spec: {
      // Leader election is off (as HyperShift runs it): never two replicas.
      replicas: desired.paused ? 0 : 1,
      selector: { matchLabels: { ...OPERAND_SELECTOR } },
      strategy: { type: 'Recreate' },
      template: {
        metadata: { labels: operandLabels() },
        spec: {
          serviceAccountName: CONVERGED_OPERAND_NAME,
          // It talks to the guest only; the management cluster's token is of no use to it.
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 10,
          initContainers: [
            {
              // A native sidecar (restartPolicy Always), as HyperShift runs it: it keeps the
              // guest ServiceAccount's token in the file the AWS SDK exchanges for the role.
              name: 'token-minter',
              image: options.tokenMinterImage,
              command: ['/usr/bin/control-plane-operator', 'token-minter'],
              args: [
                `--service-account-namespace=${CONVERGED_GUEST_NAMESPACE}`,
                `--service-account-name=${CONVERGED_GUEST_SERVICE_ACCOUNT}`,
                `--token-file=${BOUND_SA_TOKEN_FILE}`,
                `--kubeconfig=${KUBECONFIG_DIR}/${KUBECONFIG_VOLUME}`,
              ],
              restartPolicy: 'Always',
              startupProbe: {
                exec: { command: ['cat', BOUND_SA_TOKEN_FILE] },
                failureThreshold: 10,
              },
              resources: { requests: { cpu: '10m', memory: '30Mi' } },
              volumeMounts: [kubeconfigMount, tokenMount],
            },
          ],
          containers: [
            {
              name: 'karpenter',
              image: options.image,
              args: [logLevelArg(desired.logLevel)],
              env: convergedOperandEnv(infra, desired, roleArn, options.proxy),
              ports: [
                { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
                { name: 'http', containerPort: HEALTH_PROBE_PORT, protocol: 'TCP' },
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                initialDelaySeconds: 60,
                periodSeconds: 60,
                failureThreshold: 5,
                timeoutSeconds: 5,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' },
                periodSeconds: 10,
                timeoutSeconds: 5,
              },
              resources: { requests: { cpu: '10m', memory: '60Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [kubeconfigMount, { ...tokenMount, readOnly: true }],
            },
          ],
          volumes: [
            {
              name: KUBECONFIG_VOLUME,
              secret: {
                secretName: guestKubeconfigSecretName(infra.infraID),
                defaultMode: 0o640,
                items: [{ key: 'value', path: KUBECONFIG_VOLUME }],
              },
            },
            { name: TOKEN_VOLUME, emptyDir: {} },
          ],
        },
      },
    },
  };
}

const asKube = (object: object): KubeObject => object as unknown as KubeObject;

/** What Karpenter needs in the guest beyond core: EC2NodeClasses (AWS) to read and finalize. */
const CONVERGED_GUEST_CLUSTER_RULES: readonly V1PolicyRule[] = AWS_CLUSTER_RULES;

/**
 * The operand in converged mode, in apply order: its ServiceAccount and Deployment in the HCP
 * namespace (management), its ServiceAccount and RBAC in the guest. No Secret is written: the
 * role comes by web identity, the guest kubeconfig is HyperShift's `<infraID>-kubeconfig`.
 */
export function renderConvergedOperand(
  infra: HostedAwsInfrastructure,
  desired: KarpenterDesiredState,
  roleArn: string,
  options: ConvergedOperandOptions,
): TargetedObject[] {
  const management: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: CONVERGED_OPERAND_NAME,
        namespace: infra.hcpNamespace,
        labels: operandLabels(),
      },
      automountServiceAccountToken: false,
    },
    asKube(convergedDeployment(infra, desired, roleArn, options)),
  ];
  const guest: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: CONVERGED_GUEST_SERVICE_ACCOUNT,
        namespace: CONVERGED_GUEST_NAMESPACE,
        labels: operandLabels(),
      },
    },
    ...operandRbac(
      {
        name: CONVERGED_GUEST_ROLE,
        namespace: CONVERGED_GUEST_NAMESPACE,
        serviceAccount: CONVERGED_GUEST_SERVICE_ACCOUNT,
        labels: operandLabels(),
      },
      CONVERGED_GUEST_CLUSTER_RULES,
    ).map(asKube),
  ];
  return [
    ...management.map((object) => ({ target: 'management' as const, object: canonical(object) })),
    ...guest.map((object) => ({ target: 'workload' as const, object: canonical(object) })),
  ];
}

/**
 * Only the sidecar may create, change or delete an EC2NodeClass in the guest: they are derived
 * from OpenshiftEC2NodeClasses (as HyperShift's own policy `karpenter.ec2nodeclass.hypershift.io`
 * says). Karpenter's own metadata writes (its finalizer) keep the spec and pass; status is a
 * subresource the policy does not match.
 */
export function renderDerivedNodeClassPolicy(sidecarUsername: string): TargetedObject[] {
  return [
    admissionPolicy(DERIVED_NODECLASS_POLICY_NAME, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [EC2_NODE_CLASS.group],
            apiVersions: [EC2_NODE_CLASS.version],
            operations: ['CREATE', 'UPDATE', 'DELETE'],
            resources: [EC2_NODE_CLASS.plural],
          },
        ],
      },
      matchConditions: notTheSidecar(sidecarUsername),
      validations: [
        {
          expression:
            "request.operation == 'UPDATE' && has(object.spec) && has(oldObject.spec) && object.spec == oldObject.spec",
          message:
            'EC2NodeClasses of this hosted cluster are derived from OpenshiftEC2NodeClasses by the Karpenter fleet sidecar: change the OpenshiftEC2NodeClass instead',
        },
      ],
    }),
    admissionPolicyBinding(DERIVED_NODECLASS_POLICY_NAME),
  ].map((object) => ({ target: 'workload' as const, object }));
}

const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * The user-data Secret HyperShift's pipeline wrote for an OpenshiftEC2NodeClass: labelled
 * managed-by-karpenter, annotated with the NodePool `<nodeclass>-karpenter`, and not the token
 * Secret beside it. Undefined while HyperShift has not written it.
 */
export function findUserDataSecret(
  nodeClassName: string,
  secrets: readonly KubeObject[],
): KubeObject | undefined {
  const expected = `${nodeClassName}-karpenter`;
  return secrets.find((s) => {
    const { labels = {}, annotations = {} } = s.metadata;
    if (labels[USER_DATA_MANAGED_LABEL] !== 'true') return false;
    if (annotations[IGNITION_TOKEN_ANNOTATION] === 'true') return false;
    const ref = annotations[USER_DATA_NODEPOOL_ANNOTATION] ?? '';
    return ref.split('/').pop() === expected;
  });
}

/** Why a NodeClass cannot be derived yet; reported on the cluster and the NodeClass. */
export class NodeClassNotReadyError extends Error {
  constructor(
    readonly reason: 'UserDataSecretNotFound' | 'AMINotFound',
    message: string,
  ) {
    super(message);
  }
}

const ARCHITECTURES = ['amd64', 'arm64'] as const;
const amiLabel = (arch: (typeof ARCHITECTURES)[number]) =>
  arch === 'amd64' ? USER_DATA_AMI_LABEL : `${USER_DATA_AMI_LABEL}-${arch}`;

function secretValue(secret: KubeObject): string {
  const data = record(secret.data);
  const stringData = record(secret.stringData);
  if (typeof data.value === 'string') return Buffer.from(data.value, 'base64').toString('utf8');
  return typeof stringData.value === 'string' ? stringData.value : '';
}

const pick = <T>(map: Record<string, T>, key: unknown): T | undefined =>
  typeof key === 'string' ? map[key] : undefined;

function blockDeviceMappings(spec: Record<string, unknown>): unknown[] {
  const mappings = list(spec.blockDeviceMappings);
  if (mappings.length === 0)
    return [
      {
        deviceName: DEFAULT_ROOT_VOLUME.deviceName,
        rootVolume: true,
        ebs: { volumeSize: DEFAULT_ROOT_VOLUME.volumeSize, volumeType: 'gp3', encrypted: true },
      },
    ];
  return mappings.map((m) => {
    const mapping = record(m);
    const ebs = record(mapping.ebs);
    const out: Record<string, unknown> = {
      ...(typeof mapping.deviceName === 'string' ? { deviceName: mapping.deviceName } : {}),
      ...(mapping.rootVolume === 'RootVolume' ? { rootVolume: true } : {}),
    };
    const device: Record<string, unknown> = {
      deleteOnTermination: pick({ Delete: true, Retain: false }, ebs.deleteOnTermination),
      encrypted: pick({ Encrypted: true, Unencrypted: false }, ebs.encrypted),
      iops: ebs.iops,
      kmsKeyID: ebs.kmsKeyID,
      snapshotID: ebs.snapshotID,
      throughput: ebs.throughput,
      volumeSize: typeof ebs.volumeSizeGiB === 'number' ? `${ebs.volumeSizeGiB}Gi` : undefined,
      volumeType: typeof ebs.volumeType === 'string' ? ebs.volumeType.toLowerCase() : undefined,
    };
    const defined = Object.fromEntries(Object.entries(device).filter(([, v]) => v !== undefined));
    return { ...out, ...(Object.keys(defined).length > 0 ? { ebs: defined } : {}) };
  });
}

function metadataOptions(spec: Record<string, unknown>): Record<string, unknown> | undefined {
  const mo = record(spec.metadataOptions);
  const out = {
    httpEndpoint: pick({ HTTPEndpoint: 'enabled', None: 'disabled' }, mo.access),
    httpProtocolIPv6: pick({ IPv6: 'enabled', IPv4: 'disabled' }, mo.httpIPProtocol),
    httpPutResponseHopLimit: mo.httpPutResponseHopLimit,
    httpTokens: pick({ Required: 'required', Optional: 'optional' }, mo.httpTokens),
  };
  const defined = Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
  return Object.keys(defined).length > 0 ? defined : undefined;
}

/**
 * HyperShift's tag rules: the cluster's resourceTags first; a NodeClass's tag of the same key
 * wins only where the cluster allows an override; keys AWS or Karpenter reserve are dropped.
 */
export function mergeHostedTags(
  nodeClassTags: Record<string, string> | undefined,
  clusterTags: HostedAwsInfrastructure['resourceTags'],
): Record<string, string> | undefined {
  const tags: Record<string, string> = {};
  const overridable = new Set<string>();
  for (const t of clusterTags) {
    tags[t.key] = t.value;
    if (t.overridePolicy === 'Allow') overridable.add(t.key);
  }
  for (const [k, v] of Object.entries(nodeClassTags ?? {})) {
    if (k in tags && !overridable.has(k)) continue;
    tags[k] = v;
  }
  const kept = Object.fromEntries(Object.entries(tags).filter(([k]) => !isRestrictedTagKey(k)));
  return nodeClassTags === undefined && Object.keys(kept).length === 0 ? undefined : kept;
}

/**
 * The EC2NodeClass Karpenter reads, derived from an OpenshiftEC2NodeClass as HyperShift's
 * karpenter-operator does (ec2_nodeclass_controller.go): user data and AMIs (one per
 * architecture label) from HyperShift's user-data Secret, the Custom AMI family, the instance
 * profile HyperShift made, selectors by the cluster's infraID unless the NodeClass names its own,
 * a 120 GiB encrypted gp3 root disk unless it names disks, its kubelet settings, and the tag
 * rules. Throws NodeClassNotReadyError without the Secret or an AMI.
 */
export function deriveEC2NodeClass(
  openshiftNodeClass: KubeObject,
  userDataSecret: KubeObject | undefined,
  infra: Pick<HostedAwsInfrastructure, 'infraID' | 'instanceProfile' | 'resourceTags'>,
): KubeObject {
  const name = openshiftNodeClass.metadata.name;
  if (!userDataSecret)
    throw new NodeClassNotReadyError(
      'UserDataSecretNotFound',
      `OpenshiftEC2NodeClass ${name}: HyperShift has not written its user-data Secret (label ${USER_DATA_MANAGED_LABEL}=true, annotation ${USER_DATA_NODEPOOL_ANNOTATION} naming NodePool ${name}-karpenter) in the HCP namespace`,
    );
  const labels = userDataSecret.metadata.labels ?? {};
  const amiSelectorTerms = ARCHITECTURES.flatMap((arch) => {
    const id = labels[amiLabel(arch)];
    return id ? [{ id }] : [];
  });
  if (amiSelectorTerms.length === 0)
    throw new NodeClassNotReadyError(
      'AMINotFound',
      `OpenshiftEC2NodeClass ${name}: user-data Secret ${userDataSecret.metadata.name} has no AMI label (${ARCHITECTURES.map(amiLabel).join(', ')})`,
    );
  const spec = record(openshiftNodeClass.spec);
  const subnets = list(spec.subnetSelectorTerms);
  const securityGroups = list(spec.securityGroupSelectorTerms);
  const kubelet = record(spec.kubelet);
  const tags = mergeHostedTags(
    spec.tags === undefined ? undefined : (record(spec.tags) as Record<string, string>),
    infra.resourceTags,
  );
  const capacityReservations = list(spec.capacityReservationSelectorTerms).map((t) => {
    const term = record(t);
    return {
      ...term,
      ...(typeof term.instanceMatchCriteria === 'string'
        ? { instanceMatchCriteria: term.instanceMatchCriteria.toLowerCase() }
        : {}),
    };
  });
  const derived: Record<string, unknown> = {
    amiFamily: 'Custom',
    amiSelectorTerms,
    userData: secretValue(userDataSecret),
    subnetSelectorTerms:
      subnets.length > 0
        ? subnets
        : [
            {
              tags: {
                'kubernetes.io/role/internal-elb': '1',
                [`kubernetes.io/cluster/${infra.infraID}`]: '*',
              },
            },
          ],
    securityGroupSelectorTerms:
      securityGroups.length > 0
        ? securityGroups
        : [{ tags: { 'karpenter.sh/discovery': infra.infraID } }],
    blockDeviceMappings: blockDeviceMappings(spec),
    associatePublicIPAddress: pick(
      { Public: true, SubnetDefault: false },
      spec.ipAddressAssociation,
    ),
    detailedMonitoring: pick({ Detailed: true, Basic: false }, spec.monitoring),
    instanceStorePolicy: spec.instanceStorePolicy,
    metadataOptions: metadataOptions(spec),
    capacityReservationSelectorTerms:
      capacityReservations.length > 0 ? capacityReservations : undefined,
    kubelet: Object.keys(kubelet).length > 0 ? kubelet : undefined,
    instanceProfile: infra.instanceProfile,
    tags,
  };
  return canonical({
    apiVersion: EC2_NODE_CLASS.apiVersion,
    kind: EC2_NODE_CLASS.kind,
    metadata: { name, labels: ownedLabels({ [DERIVED_FROM_LABEL]: name }) },
    spec: Object.fromEntries(Object.entries(derived).filter(([, v]) => v !== undefined)),
  });
}

/** The guest kinds converged mode also derives (pruned by the derived-from label). */
export const DERIVED_KINDS = [{ ...EC2_NODE_CLASS, target: 'workload' as const }];

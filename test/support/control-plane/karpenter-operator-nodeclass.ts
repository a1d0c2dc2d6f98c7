import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { deepEqual, nowIso } from '../kube-apiserver/util.js';

// What HyperShift's karpenter-operator computes for one OpenshiftEC2NodeClass, as pure functions
// on the objects' JSON, each following its upstream function at openshift/hypershift 3ee9615567ac
// (read, not copied; test/support/hypershift-stand-ins.README.md has the parity table):
// - karpenter-operator/controllers/nodeclass/ec2_nodeclass_controller.go: reconcileEC2NodeClass,
//   AMISelectorTerms, mergeEC2NodeClassTags, filterRestrictedTags, reconcileStatus,
//   computeReadyCondition, setAWSResourceTagConflictCondition, reconcileKarpenterSubnetsConfigMap,
//   reconcileVAP;
// - karpenter-operator/controllers/nodeclass/karpenter_util.go: every karpenter*FromNodeClassSpec
//   conversion (HyperShift's PascalCase API to Karpenter's EC2NodeClass);
// - karpenter-operator/controllers/karpenterignition/karpenterignition_controller.go:
//   updateVersionStatus, setVersionSkewCondition, currentClusterVersion, reconcileKubeletConfigMap.
// Go's nil-versus-empty distinctions are kept where they change what reaches the API server.

export const HYPERSHIFT_COMMIT = '3ee9615567ac';
/** ec2_nodeclass_controller.go's finalizer on every OpenshiftEC2NodeClass it reconciles. */
export const EC2_NODECLASS_FINALIZER = 'hypershift.openshift.io/ec2-nodeclass-finalizer';
/** karpenterignition_controller.go's finalizer while spec.kubelet is set. */
export const KUBELET_CONFIG_FINALIZER =
  'hypershift.openshift.io/karpenter-kubelet-config-finalizer';
export const CONFIG_VERSION_ANNOTATION = 'hypershift.openshift.io/nodeClassCurrentConfigVersion';
/** support/karpenter: the AMI label of each architecture on the user-data Secret. */
export const AMI_LABELS = ['hypershift.openshift.io/ami', 'hypershift.openshift.io/ami-arm64'];
export const KARPENTER_SUBNETS_CONFIGMAP = 'karpenter-subnets';
export const KUBELET_CONFIGMAP_LABEL = 'hypershift.openshift.io/karpenter-nodeclass-kubelet-config';
export const DEFAULT_ROOT_VOLUME_SIZE = '120Gi';
export const VAP_NAME = 'karpenter.ec2nodeclass.hypershift.io';
export const VAP_BINDING_NAME = 'karpenter-binding.ec2nodeclass.hypershift.io';
export const VAP_MESSAGE =
  "EC2NodeClass resource can't be created/updated/deleted directly, please use OpenshiftEC2NodeClass resource instead";
/** The user HyperShift's hcco-kubeconfig authenticates as (the VAP lets it through). */
export const HCCO_USER = 'system:hosted-cluster-config';

type Tags = Record<string, string>;

/** The OpenshiftEC2NodeClass spec (api/karpenter/v1/karpenter_types.go), as JSON. */
export interface OpenshiftEC2NodeClassSpec {
  subnetSelectorTerms?: { tags?: Tags; id?: string }[];
  securityGroupSelectorTerms?: { tags?: Tags; id?: string; name?: string }[];
  capacityReservationSelectorTerms?: {
    tags?: Tags;
    id?: string;
    ownerID?: string;
    instanceMatchCriteria?: string;
  }[];
  ipAddressAssociation?: string;
  tags?: Tags;
  blockDeviceMappings?: {
    deviceName?: string;
    rootVolume?: string;
    ebs?: {
      deleteOnTermination?: string;
      encrypted?: string;
      iops?: number;
      kmsKeyID?: string;
      snapshotID?: string;
      throughput?: number;
      volumeSizeGiB?: number;
      volumeType?: string;
    };
  }[];
  instanceStorePolicy?: string;
  monitoring?: string;
  metadataOptions?: {
    access?: string;
    httpIPProtocol?: string;
    httpPutResponseHopLimit?: number;
    httpTokens?: string;
  };
  version?: string;
  kubelet?: Record<string, unknown>;
}

export interface Condition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
  reason: string;
  message: string;
}

/** The HostedControlPlane fields the operator reads. */
export interface HostedControlPlaneView {
  metadata?: { annotations?: Record<string, string> };
  spec: {
    infraID: string;
    releaseImage?: string;
    platform?: {
      type?: string;
      aws?: { resourceTags?: { key: string; value: string; overridePolicy?: string }[] };
    };
  };
  status?: {
    versionStatus?: {
      desired?: { version?: string };
      history?: { version?: string; state?: string; completionTime?: string }[];
    };
  };
}

const set = <T>(value: T | undefined): value is T => value !== undefined && value !== null;
const nonEmpty = (s: string | undefined): string | undefined => (s ? s : undefined);
const nonZero = (n: number | undefined): number | undefined => (n ? n : undefined);
/** A map with omitempty: an empty one is not sent. */
const nonEmptyMap = (m: Tags | undefined): Tags | undefined =>
  m && Object.keys(m).length ? m : undefined;
/** Drops undefined members, as Go's omitempty does for nil pointers. */
function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * AMISelectorTerms: one term per supported architecture (amd64, arm64 on AWS) whose AMI label the
 * user-data Secret carries; none is an error (the reconcile fails, nothing is written).
 */
export function amiSelectorTerms(
  secretLabels: Record<string, string> | undefined,
  platform: string | undefined,
): { id?: string }[] {
  if (platform !== 'AWS')
    throw new Error(
      `failed to get AMISelectorTerms: failed to get supported architectures: unsupported platform: ${platform}`,
    );
  const terms = AMI_LABELS.flatMap((label) =>
    secretLabels?.[label] !== undefined ? [compact({ id: nonEmpty(secretLabels[label]) })] : [],
  );
  if (!terms.length)
    throw new Error(
      'failed to get AMISelectorTerms: no AMIs found for supported architectures: [amd64 arm64]',
    );
  return terms;
}

/** Karpenter's RestrictedTagPatterns (karpenter-provider-aws pkg/apis/v1/labels.go, vendored). */
const RESTRICTED_TAG_PATTERNS = [
  /^kubernetes\.io\/cluster\/[0-9A-Za-z][A-Za-z0-9\-_]*$/,
  /^karpenter\.sh\/nodepool$/,
  /^eks:eks-cluster-name$/,
  /^karpenter\.k8s\.aws\/ec2nodeclass$/,
  /^karpenter\.sh\/nodeclaim$/,
];

/**
 * mergeEC2NodeClassTags: the HostedControlPlane's resourceTags, then the class's tags only where
 * no platform tag has the key or its overridePolicy is Allow; Karpenter's restricted tags dropped.
 * Undefined when nothing is left (nil, or an empty map omitempty drops).
 */
export function mergeTags(
  nodeClassTags: Tags | undefined,
  hcp: HostedControlPlaneView,
): Tags | undefined {
  const tags: Tags = {};
  const allowOverride = new Set<string>();
  for (const tag of hcp.spec.platform?.aws?.resourceTags ?? []) {
    tags[tag.key] = tag.value;
    if (tag.overridePolicy === 'Allow') allowOverride.add(tag.key);
  }
  for (const [key, value] of Object.entries(nodeClassTags ?? {})) {
    if (key in tags && !allowOverride.has(key)) continue;
    tags[key] = value;
  }
  const filtered = Object.fromEntries(
    Object.entries(tags).filter(([key]) => !RESTRICTED_TAG_PATTERNS.some((p) => p.test(key))),
  );
  return Object.keys(filtered).length ? filtered : undefined;
}

/** karpenterBlockDeviceMappingFromNodeClassSpec; undefined for none (the default applies then). */
export function blockDeviceMappings(
  spec: OpenshiftEC2NodeClassSpec,
): Record<string, unknown>[] | undefined {
  // Go appends to a nil slice: an empty list converts to nil too.
  if (!spec.blockDeviceMappings?.length) return undefined;
  const bool = (value: string | undefined, yes: string, no: string) =>
    value === yes ? true : value === no ? false : undefined;
  return spec.blockDeviceMappings.map((m) => {
    const ebs = m.ebs ?? {};
    return compact({
      deviceName: nonEmpty(m.deviceName),
      // rootVolume is a plain bool with omitempty: only RootVolume shows.
      rootVolume: m.rootVolume === 'RootVolume' ? true : undefined,
      // EBS is always a non-nil pointer: an empty ebs is sent as {}.
      ebs: compact({
        deleteOnTermination: bool(ebs.deleteOnTermination, 'Delete', 'Retain'),
        encrypted: bool(ebs.encrypted, 'Encrypted', 'Unencrypted'),
        iops: set(ebs.iops) ? ebs.iops : undefined,
        kmsKeyID: nonEmpty(ebs.kmsKeyID),
        snapshotID: nonEmpty(ebs.snapshotID),
        throughput: set(ebs.throughput) ? ebs.throughput : undefined,
        volumeSize: ebs.volumeSizeGiB ? `${ebs.volumeSizeGiB}Gi` : undefined,
        volumeType: nonEmpty(ebs.volumeType?.toLowerCase()),
      }),
    });
  });
}

/** reconcileEC2NodeClass's default when the class has no blockDeviceMappings. */
export const defaultBlockDeviceMappings = (): Record<string, unknown>[] => [
  {
    deviceName: '/dev/xvda',
    ebs: { volumeSize: DEFAULT_ROOT_VOLUME_SIZE, volumeType: 'gp3', encrypted: true },
  },
];

/** karpenterCapacityReservationSelectorTermsFromNodeClassSpec: Open/Targeted lowercased. */
export function capacityReservationSelectorTerms(
  spec: OpenshiftEC2NodeClassSpec,
): Record<string, unknown>[] | undefined {
  if (!spec.capacityReservationSelectorTerms?.length) return undefined;
  return spec.capacityReservationSelectorTerms.map((t) =>
    compact({
      tags: nonEmptyMap(t.tags),
      id: nonEmpty(t.id),
      ownerID: nonEmpty(t.ownerID),
      instanceMatchCriteria: nonEmpty(t.instanceMatchCriteria?.toLowerCase()),
    }),
  );
}

/** karpenterMetadataOptionsFromNodeClassSpec: nothing set, nothing sent (the CRD defaults it). */
export function metadataOptions(
  spec: OpenshiftEC2NodeClassSpec,
): Record<string, unknown> | undefined {
  const mo = spec.metadataOptions ?? {};
  if (!mo.access && !mo.httpIPProtocol && !mo.httpPutResponseHopLimit && !mo.httpTokens)
    return undefined;
  const pick = (value: string | undefined, map: Record<string, string>) =>
    value !== undefined ? map[value] : undefined;
  return compact({
    httpEndpoint: pick(mo.access, { HTTPEndpoint: 'enabled', None: 'disabled' }),
    httpProtocolIPv6: pick(mo.httpIPProtocol, { IPv6: 'enabled', IPv4: 'disabled' }),
    httpPutResponseHopLimit: nonZero(mo.httpPutResponseHopLimit),
    httpTokens: pick(mo.httpTokens, { Required: 'required', Optional: 'optional' }),
  });
}

/** api/karpenter/v1/kubelet_config.go: the typed fields; everything else is Overflow. */
const KUBELET_TYPED_FIELDS = [
  'maxPods',
  'podsPerCore',
  'systemReserved',
  'kubeReserved',
  'evictionHard',
  'evictionSoft',
  'evictionSoftGracePeriod',
  'evictionMaxPodGracePeriod',
  'imageGCHighThresholdPercent',
  'imageGCLowThresholdPercent',
  'cpuCFSQuota',
] as const;
const ZERO_WHEN_UNSET = new Set(['maxPods', 'podsPerCore']);

/** The typed kubelet fields as Go holds them: int32 zero is unset, a nil map or pointer too. */
function typedKubelet(kubelet: Record<string, unknown> | undefined): Record<string, unknown> {
  const typed: Record<string, unknown> = {};
  for (const field of KUBELET_TYPED_FIELDS) {
    const value = kubelet?.[field];
    if (!set(value)) continue;
    if (ZERO_WHEN_UNSET.has(field) && value === 0) continue;
    typed[field] = value;
  }
  return typed;
}

/** KubeletConfiguration.HasTypedFields. */
export const hasTypedKubeletFields = (kubelet: Record<string, unknown> | undefined): boolean =>
  Object.keys(typedKubelet(kubelet)).length > 0;

/** KubeletConfiguration.IsZero: no typed field and no overflow. */
export function kubeletIsZero(kubelet: Record<string, unknown> | undefined): boolean {
  if (hasTypedKubeletFields(kubelet)) return false;
  const typed = new Set<string>(KUBELET_TYPED_FIELDS);
  return !Object.entries(kubelet ?? {}).some(([k]) => !typed.has(k));
}

/**
 * karpenterKubeletConfigurationFromNodeClassSpec: the typed fields only (overflow fields go to the
 * kubelet ConfigMap, never to the EC2NodeClass: hypershift#8192); evictionSoftGracePeriod values
 * parsed as Go durations and written as Go prints them, unparsable ones dropped.
 */
export function kubeletConfiguration(
  spec: OpenshiftEC2NodeClassSpec,
): Record<string, unknown> | undefined {
  const typed = typedKubelet(spec.kubelet);
  if (!Object.keys(typed).length) return undefined;
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(typed)) {
    if (field === 'evictionSoftGracePeriod') {
      const periods: Record<string, string> = {};
      for (const [signal, text] of Object.entries(value as Record<string, string>)) {
        const ns = parseGoDuration(text);
        if (ns !== undefined) periods[signal] = formatGoDuration(ns);
      }
      // A map with omitempty: an empty one is not sent.
      if (Object.keys(periods).length) out[field] = periods;
    } else if (typeof value === 'object' && !Array.isArray(value)) {
      if (Object.keys(value as object).length) out[field] = value;
    } else out[field] = value;
  }
  return out;
}

/** The EC2NodeClass spec reconcileEC2NodeClass writes (the whole spec: nothing else survives). */
export function derivedEc2NodeClassSpec(
  nodeClass: { spec?: OpenshiftEC2NodeClassSpec },
  hcp: HostedControlPlaneView,
  userDataSecret: { data?: Record<string, string>; metadata?: { labels?: Record<string, string> } },
): Record<string, unknown> {
  const spec = nodeClass.spec ?? {};
  const amis = amiSelectorTerms(userDataSecret.metadata?.labels, hcp.spec.platform?.type);
  const instanceProfile =
    hcp.metadata?.annotations?.['hypershift.openshift.io/aws-karpenter-default-instance-profile'];
  const value = userDataSecret.data?.value;
  return compact({
    userData: value === undefined ? '' : Buffer.from(value, 'base64').toString(),
    amiFamily: 'Custom',
    amiSelectorTerms: amis,
    associatePublicIPAddress:
      spec.ipAddressAssociation === 'Public'
        ? true
        : spec.ipAddressAssociation === 'SubnetDefault'
          ? false
          : undefined,
    tags: mergeTags(spec.tags, hcp),
    detailedMonitoring:
      spec.monitoring === 'Detailed' ? true : spec.monitoring === 'Basic' ? false : undefined,
    blockDeviceMappings: blockDeviceMappings(spec) ?? defaultBlockDeviceMappings(),
    instanceStorePolicy: nonEmpty(spec.instanceStorePolicy),
    metadataOptions: metadataOptions(spec),
    capacityReservationSelectorTerms: capacityReservationSelectorTerms(spec),
    kubelet: kubeletConfiguration(spec),
    instanceProfile: nonEmpty(instanceProfile),
    // A list given (even empty) is converted term by term; only an absent one takes the default.
    subnetSelectorTerms: spec.subnetSelectorTerms
      ? spec.subnetSelectorTerms.map((t) =>
          compact({ tags: nonEmptyMap(t.tags), id: nonEmpty(t.id) }),
        )
      : [
          {
            tags: {
              'kubernetes.io/role/internal-elb': '1',
              [`kubernetes.io/cluster/${hcp.spec.infraID}`]: '*',
            },
          },
        ],
    securityGroupSelectorTerms: spec.securityGroupSelectorTerms
      ? spec.securityGroupSelectorTerms.map((t) =>
          compact({ tags: nonEmptyMap(t.tags), id: nonEmpty(t.id), name: nonEmpty(t.name) }),
        )
      : [{ tags: { 'karpenter.sh/discovery': hcp.spec.infraID } }],
  });
}

/** apimachinery meta.SetStatusCondition: a new status moves lastTransitionTime; true if changed. */
export function setStatusCondition(conditions: Condition[], next: Condition): boolean {
  const existing = conditions.find((c) => c.type === next.type);
  if (!existing) {
    conditions.push({ ...next, lastTransitionTime: next.lastTransitionTime || nowIso() });
    return true;
  }
  let changed = false;
  if (existing.status !== next.status) {
    existing.status = next.status;
    existing.lastTransitionTime = next.lastTransitionTime || nowIso();
    changed = true;
  }
  for (const key of ['reason', 'message'] as const) {
    if ((existing[key] ?? '') !== (next[key] ?? '')) {
      existing[key] = next[key];
      changed = true;
    }
  }
  if ((existing.observedGeneration ?? 0) !== (next.observedGeneration ?? 0)) {
    existing.observedGeneration = next.observedGeneration;
    changed = true;
  }
  return changed;
}

/** The OpenshiftEC2NodeClass status (karpenter_types.go), as JSON. */
export interface OpenshiftEC2NodeClassStatus {
  conditions?: Condition[];
  subnets?: { id?: string; zone?: string; zoneID?: string }[];
  securityGroups?: { id?: string; name?: string }[];
  releaseImage?: string;
  version?: string;
  capacityReservations?: Record<string, unknown>[];
}

interface Ec2NodeClassStatus {
  subnets?: { id: string; zone: string; zoneID?: string }[];
  securityGroups?: { id: string; name?: string }[];
  capacityReservations?: {
    availabilityZone: string;
    endTime?: string;
    id: string;
    instanceMatchCriteria: string;
    instanceType: string;
    ownerID: string;
    reservationType: string;
    state: string;
  }[];
  conditions?: Condition[];
}

const listOrUndefined = <T>(items: T[]): T[] | undefined => (items.length ? items : undefined);

/**
 * reconcileStatus: subnets, security groups and capacity reservations copied from the
 * EC2NodeClass (Karpenter's lowercase enums to HyperShift's PascalCase), its conditions set over
 * the class's own, then Ready forced False while VersionResolved is not True, then
 * AWSResourceTagConflict. releaseImage, version and the ignition controller's conditions are
 * left as they are. Returns the new status (a copy).
 */
export function mirroredStatus(
  nodeClass: {
    metadata?: { generation?: number };
    spec?: OpenshiftEC2NodeClassSpec;
    status?: OpenshiftEC2NodeClassStatus;
  },
  ec2NodeClassStatus: Ec2NodeClassStatus | undefined,
  hcp: HostedControlPlaneView,
): OpenshiftEC2NodeClassStatus {
  const ec2 = ec2NodeClassStatus ?? {};
  const status: OpenshiftEC2NodeClassStatus = structuredClone(nodeClass.status ?? {});
  const generation = nodeClass.metadata?.generation ?? 0;
  status.securityGroups = listOrUndefined(
    (ec2.securityGroups ?? []).map((sg) =>
      compact({ id: nonEmpty(sg.id), name: nonEmpty(sg.name) }),
    ),
  );
  status.subnets = listOrUndefined(
    (ec2.subnets ?? []).map((s) =>
      compact({ id: nonEmpty(s.id), zone: nonEmpty(s.zone), zoneID: nonEmpty(s.zoneID) }),
    ),
  );
  status.capacityReservations = listOrUndefined(
    (ec2.capacityReservations ?? []).map((cr) =>
      compact({
        availabilityZone: nonEmpty(cr.availabilityZone),
        endTime: nonEmpty(cr.endTime),
        id: nonEmpty(cr.id),
        instanceMatchCriteria: nonEmpty(
          cr.instanceMatchCriteria.slice(0, 1).toUpperCase() + cr.instanceMatchCriteria.slice(1),
        ),
        instanceType: nonEmpty(cr.instanceType),
        ownerID: nonEmpty(cr.ownerID),
        reservationType: cr.reservationType === 'capacity-block' ? 'CapacityBlock' : 'Default',
        state: cr.state === 'expiring' ? 'Expiring' : 'Active',
      }),
    ),
  );
  const conditions = status.conditions ?? [];
  for (const c of ec2.conditions ?? []) setStatusCondition(conditions, { ...c });
  // computeReadyCondition
  const versionResolved = conditions.find((c) => c.type === 'VersionResolved');
  if (versionResolved?.status !== 'True')
    setStatusCondition(conditions, {
      type: 'Ready',
      status: 'False',
      observedGeneration: generation,
      lastTransitionTime: nowIso(),
      reason: versionResolved ? versionResolved.reason : 'ResolutionFailed',
      message: versionResolved
        ? `Version resolution failed: ${versionResolved.message}`
        : 'Version resolution status is unknown',
    });
  tagConflictCondition(conditions, nodeClass.spec?.tags, hcp, generation);
  status.conditions = listOrUndefined(conditions);
  return compact(status as Record<string, unknown>);
}

/** setAWSResourceTagConflictCondition. */
function tagConflictCondition(
  conditions: Condition[],
  nodeClassTags: Tags | undefined,
  hcp: HostedControlPlaneView,
  generation: number,
): void {
  const type = 'AWSResourceTagConflict';
  const platformTags = hcp.spec.platform?.aws?.resourceTags ?? [];
  if (!platformTags.length || !Object.keys(nodeClassTags ?? {}).length) {
    const at = conditions.findIndex((c) => c.type === type);
    if (at >= 0) conditions.splice(at, 1);
    return;
  }
  let blocked = 0;
  let overridden = 0;
  for (const [key, value] of Object.entries(nodeClassTags ?? {})) {
    const tag = platformTags.find((t) => t.key === key);
    if (!tag || tag.value === value) continue;
    if (tag.overridePolicy === 'Allow') overridden++;
    else blocked++;
  }
  if (!blocked) {
    setStatusCondition(conditions, {
      type,
      status: 'False',
      reason: 'NoTagConflict',
      message: overridden
        ? `${overridden} AWS resource tag override(s) applied; nodeclass values used (allowed by HostedCluster)`
        : 'No AWS resource tag conflicts detected',
      observedGeneration: generation,
    });
    return;
  }
  setStatusCondition(conditions, {
    type,
    status: 'True',
    reason: 'TagConflictDetected',
    message:
      `${blocked} AWS resource tag conflict(s) detected; HostedCluster values preserved (override not allowed)` +
      (overridden ? `; ${overridden} override(s) applied (allowed by HostedCluster)` : ''),
    observedGeneration: generation,
  });
}

/**
 * currentClusterVersion (of the HostedCluster karpenterignition builds from the HCP): the newest
 * Completed history entry's version, else the desired version.
 */
export function currentClusterVersion(hcp: HostedControlPlaneView): string {
  const versionStatus = hcp.status?.versionStatus;
  if (!versionStatus) return '';
  let latest: { version?: string; completionTime?: string } | undefined;
  for (const entry of versionStatus.history ?? []) {
    if (entry.state !== 'Completed') continue;
    if (
      !latest ||
      (entry.completionTime &&
        latest.completionTime &&
        Date.parse(entry.completionTime) > Date.parse(latest.completionTime))
    )
      latest = entry;
  }
  return latest ? (latest.version ?? '') : (versionStatus.desired?.version ?? '');
}

/** Why the stand-in resolves no spec.version (upstream asks Cincinnati through its VersionResolver). */
export const VERSION_NOT_RESOLVED =
  'the stand-in resolves no version: Cincinnati (releaseinfo.VersionResolver) is not played';

/**
 * karpenterignition's version handling for a class: without spec.version, status.releaseImage is
 * the control plane's, status.version its current version, VersionResolved and
 * SupportedVersionSkew True VersionNotSpecified (updateVersionStatus, setVersionSkewCondition).
 * With spec.version the stand-in takes upstream's resolution-failure path (VersionResolved False
 * ResolutionFailed, releaseImage cleared, no skew verdict) and `resolved` is false: upstream then
 * returns before writing the user data.
 */
export function versionStatus(
  nodeClass: {
    metadata?: { generation?: number };
    spec?: OpenshiftEC2NodeClassSpec;
    status?: OpenshiftEC2NodeClassStatus;
  },
  hcp: HostedControlPlaneView,
): { status: OpenshiftEC2NodeClassStatus; resolved: boolean } {
  const status: OpenshiftEC2NodeClassStatus = structuredClone(nodeClass.status ?? {});
  const observedGeneration = nodeClass.metadata?.generation ?? 0;
  const requested = nodeClass.spec?.version ?? '';
  const conditions = status.conditions ?? [];
  if (requested === '') {
    setStatusCondition(conditions, {
      type: 'SupportedVersionSkew',
      status: 'True',
      reason: 'VersionNotSpecified',
      message: 'No version specified, nodes use the control plane release image',
      observedGeneration,
    });
    status.releaseImage = nonEmpty(hcp.spec.releaseImage);
    status.version = nonEmpty(currentClusterVersion(hcp));
    setStatusCondition(conditions, {
      type: 'VersionResolved',
      status: 'True',
      reason: 'VersionNotSpecified',
      message: 'No version specified, using control plane release image',
      observedGeneration,
    });
  } else {
    status.releaseImage = undefined;
    status.version = requested;
    setStatusCondition(conditions, {
      type: 'VersionResolved',
      status: 'False',
      reason: 'ResolutionFailed',
      message: `Failed to resolve version "${requested}": ${VERSION_NOT_RESOLVED}`,
      observedGeneration,
    });
  }
  status.conditions = listOrUndefined(conditions);
  return {
    status: compact(status as Record<string, unknown>),
    resolved: requested === '',
  };
}

/**
 * The merge patch turning `from` into `to` at the top level of a status (a list or map replaced
 * whole, a field gone set to null), as controller-runtime's MergeFrom computes it for these
 * flat statuses; undefined when nothing changed.
 */
export function statusMergePatch(
  from: Record<string, unknown> | undefined,
  to: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(from ?? {}), ...Object.keys(to)])) {
    if (!deepEqual((from ?? {})[key] ?? null, to[key] ?? null)) patch[key] = to[key] ?? null;
  }
  return Object.keys(patch).length ? patch : undefined;
}

/**
 * reconcileKarpenterSubnetsConfigMap's data: the subnet IDs in the status of every class not
 * being deleted, unique and sorted; undefined when there are none (the ConfigMap is deleted).
 */
export function karpenterSubnetIDs(
  nodeClasses: {
    metadata?: { deletionTimestamp?: string };
    status?: OpenshiftEC2NodeClassStatus;
  }[],
): string[] | undefined {
  const ids = new Set<string>();
  for (const nodeClass of nodeClasses) {
    if (nodeClass.metadata?.deletionTimestamp) continue;
    for (const subnet of nodeClass.status?.subnets ?? []) if (subnet.id) ids.add(subnet.id);
  }
  return ids.size ? [...ids].sort() : undefined;
}

/** support/karpenter KarpenterBaseTaintMap: registerWithTaints, merged last so it always wins. */
const BASE_TAINTS = {
  registerWithTaints: [{ key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' }],
};

/**
 * reconcileKubeletConfigMap's `config`: a KubeletConfig manifest of the class's whole kubelet
 * (typed and overflow fields, as KubeletConfiguration.MarshalJSON writes them) with the base taint
 * merged over it, printed as sigs.k8s.io/yaml does (sorted keys, no trailing newline).
 */
export function kubeletConfigManifest(
  nodeClassName: string,
  kubelet: Record<string, unknown>,
): string {
  const typed = new Set<string>(KUBELET_TYPED_FIELDS);
  const marshalled: Record<string, unknown> = {
    ...Object.fromEntries(Object.entries(kubelet).filter(([k]) => !typed.has(k))),
    ...typedKubelet(kubelet),
  };
  for (const [key, value] of Object.entries(marshalled))
    if (value && typeof value === 'object' && !Array.isArray(value) && !Object.keys(value).length)
      delete marshalled[key];
  const manifest = {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'KubeletConfig',
    metadata: { name: `karpenter-kubelet-${nodeClassName}` },
    spec: { kubeletConfig: { ...marshalled, ...BASE_TAINTS } },
  };
  return stringify(manifest, { sortMapEntries: true, indentSeq: false }).replace(/\n$/, '');
}

/**
 * The config-version annotation's value. Upstream hashes the whole rendered node configuration
 * (ConfigGenerator.Hash); the stand-in renders none and hashes what would change it here: the
 * release image and the kubelet configuration.
 */
export function configVersionHash(releaseImage: string, kubelet: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([releaseImage, kubelet ?? null]))
    .digest('hex')
    .slice(0, 8);
}

/** reconcileVAP: what the policy and its binding hold (the rest is the API server's default). */
export function ec2NodeClassAdmissionPolicy(): Record<string, unknown>[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: VAP_NAME },
      spec: {
        matchConstraints: {
          resourceRules: [
            {
              operations: ['*'],
              apiGroups: ['karpenter.k8s.aws'],
              apiVersions: ['v1'],
              resources: ['ec2nodeclasses'],
            },
          ],
        },
        matchConditions: [
          {
            name: 'exclude-hcco-user',
            expression: `'${HCCO_USER}' != request.userInfo.username`,
          },
        ],
        validations: [
          {
            expression: 'has(oldObject.spec) && has(object.spec) && object.spec == oldObject.spec',
            message: VAP_MESSAGE,
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: VAP_BINDING_NAME },
      spec: { policyName: VAP_NAME, validationActions: ['Deny'] },
    },
  ];
}

// Go's time.Duration, in nanoseconds (BigInt: int64).
const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5
  μs: 1_000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_DURATION = (1n << 63n) - 1n;

/** time.ParseDuration; undefined where Go returns an error. */
export function parseGoDuration(text: string): bigint | undefined {
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return undefined;
  let total = 0n;
  while (s !== '') {
    const match = /^(\d*)(?:\.(\d*))?([^\d.]+)/.exec(s);
    if (!match) return undefined;
    const [whole, integer = '', fraction] = match;
    if (integer === '' && !fraction) return undefined; // no digits at all
    const unit = UNITS[match[3]!];
    if (unit === undefined) return undefined;
    let value = BigInt(integer || '0') * unit;
    if (fraction) {
      // Go adds the fraction through float64: f * (unit / scale), truncated.
      const digits = fraction.slice(0, 18);
      const scale = 10 ** digits.length;
      value += BigInt(Math.trunc(Number(digits) * (Number(unit) / scale)));
    }
    total += value;
    if (total > MAX_DURATION + (negative ? 1n : 0n)) return undefined;
    s = s.slice(whole.length);
  }
  return negative ? -total : total;
}

/** time.Duration.String. */
export function formatGoDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const negative = ns < 0n;
  let u = negative ? -ns : ns;
  const sign = negative ? '-' : '';
  const fraction = (value: bigint, digits: number) => {
    const scale = 10n ** BigInt(digits);
    const frac = (value % scale).toString().padStart(digits, '0').replace(/0+$/, '');
    return `${value / scale}${frac ? `.${frac}` : ''}`;
  };
  if (u < 1_000_000_000n) {
    if (u < 1_000n) return `${sign}${u}ns`;
    if (u < 1_000_000n) return `${sign}${fraction(u, 3)}µs`;
    return `${sign}${fraction(u, 6)}ms`;
  }
  const hours = u / UNITS.h!;
  u -= hours * UNITS.h!;
  const minutes = u / UNITS.m!;
  u -= minutes * UNITS.m!;
  const seconds = `${fraction(u, 9)}s`;
  if (hours) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

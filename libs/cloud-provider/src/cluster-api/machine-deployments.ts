import { createHash } from 'node:crypto';
import {
  CLUSTER_NAME_LABEL,
  DEPLOYMENT_NAME_LABEL,
  MACHINE_DEPLOYMENT,
  type ClusterApiInfrastructure,
} from '@fleet/discovery';
import { canonical } from '../canonical.js';
import { ownedLabels } from '../labels.js';
import type { KubeObject, ResourceIdentity, TargetedObject } from '../types.js';
import { CAPACITY_ANNOTATION, DEFAULT_MAX_PODS, KARPENTER_NODE_GROUP_LABEL } from './constants.js';
import type { InstanceCapacity } from './infrastructure.js';

export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';

export interface KarpenterNodeGroupsInput {
  infra: ClusterApiInfrastructure;
  capacities: readonly InstanceCapacity[];
  templateKind: ResourceIdentity;
  /** The infrastructure template spec for each instance type (InfrastructureProvider.templateSpecFor). */
  templateSpecFor(instanceType: string): Record<string, unknown>;
}

/** `m6i.xlarge` → `m6i-xlarge`: instance types become parts of object names. */
const dns = (s: string): string => s.toLowerCase().replace(/[^a-z0-9-]/g, '-');

/**
 * The annotations karpenter-provider-cluster-api reads to offer a MachineDeployment at zero
 * replicas (cloudprovider.go, capacityResourceListFromAnnotations and the labels annotation).
 * No `cluster-api-autoscaler-node-group-{min,max}-size`: the provider reads a missing max-size
 * as "no limit", and the Cluster Autoscaler manages any group whose max-size is above 0 (a
 * missing min-size is 0), so a max-size would hand the group to it as well.
 */
export function capacityAnnotations(
  capacity: InstanceCapacity,
  zone: string,
  rootVolumeGiB: number | undefined,
): Record<string, string> {
  const labels = [
    `${ZONE_LABEL}=${zone}`,
    `${INSTANCE_TYPE_LABEL}=${capacity.instanceType}`,
    `kubernetes.io/arch=${capacity.architecture}`,
    'kubernetes.io/os=linux',
  ];
  return {
    [CAPACITY_ANNOTATION.cpu]: String(capacity.vCpus),
    [CAPACITY_ANNOTATION.memory]: `${capacity.memoryMiB}Mi`,
    ...(capacity.gpu
      ? {
          [CAPACITY_ANNOTATION.gpuCount]: String(capacity.gpu.count),
          [CAPACITY_ANNOTATION.gpuType]: capacity.gpu.resourceName,
        }
      : {}),
    // The kubelet's ephemeral storage is the root volume's filesystem.
    ...(rootVolumeGiB !== undefined
      ? { [CAPACITY_ANNOTATION.ephemeralDisk]: `${rootVolumeGiB}Gi` }
      : {}),
    [CAPACITY_ANNOTATION.maxPods]: String(DEFAULT_MAX_PODS),
    [CAPACITY_ANNOTATION.labels]: labels.join(','),
  };
}

/**
 * For each allowed instance type, an infrastructure template cloned from the worker's with that
 * type, and for each failure domain a MachineDeployment at zero replicas using it, labelled for
 * the default ClusterAPINodeClass. All on the management cluster, in the Cluster's namespace.
 *
 * Templates are named after their content: infrastructure templates are immutable (CAPA's
 * webhook refuses spec changes), so a changed worker template yields a new one and the
 * MachineDeployment's infrastructureRef moves to it, which is how CAPI rolls machines.
 */
export function renderKarpenterNodeGroups(input: KarpenterNodeGroupsInput): TargetedObject[] {
  const { infra, templateKind } = input;
  const out: TargetedObject[] = [];
  for (const capacity of [...input.capacities].sort((a, b) =>
    a.instanceType < b.instanceType ? -1 : 1,
  )) {
    const spec = input.templateSpecFor(capacity.instanceType);
    const hash = createHash('sha256')
      .update(JSON.stringify(canonical(spec)))
      .digest('hex')
      .slice(0, 8);
    const templateName = `${infra.clusterName}-karpenter-${dns(capacity.instanceType)}-${hash}`;
    const template: KubeObject = {
      apiVersion: templateKind.apiVersion,
      kind: templateKind.kind,
      metadata: {
        name: templateName,
        namespace: infra.namespace,
        labels: ownedLabels({ [CLUSTER_NAME_LABEL]: infra.clusterName }),
      },
      spec: { template: { spec } },
    };
    out.push({ target: 'management', object: template });
    for (const zone of infra.failureDomains) {
      const name = `${infra.clusterName}-karpenter-${dns(capacity.instanceType)}-${dns(zone)}`;
      const selectorLabels = {
        [CLUSTER_NAME_LABEL]: infra.clusterName,
        [DEPLOYMENT_NAME_LABEL]: name,
      };
      const md: KubeObject = {
        apiVersion: MACHINE_DEPLOYMENT.apiVersion,
        kind: MACHINE_DEPLOYMENT.kind,
        metadata: {
          name,
          namespace: infra.namespace,
          labels: ownedLabels({
            [CLUSTER_NAME_LABEL]: infra.clusterName,
            // The default ClusterAPINodeClass selects this value (operand.ts, nodeGroupSelector).
            [KARPENTER_NODE_GROUP_LABEL]: infra.namespace,
            [ZONE_LABEL]: zone,
            [INSTANCE_TYPE_LABEL]: capacity.instanceType,
          }),
          annotations: capacityAnnotations(capacity, zone, infra.template.rootVolumeGiB),
        },
        spec: {
          clusterName: infra.clusterName,
          // Karpenter owns the replica count from here on (it scales spec.replicas).
          replicas: 0,
          selector: { matchLabels: selectorLabels },
          template: {
            metadata: { labels: { ...selectorLabels } },
            spec: {
              clusterName: infra.clusterName,
              ...(infra.worker.version ? { version: infra.worker.version } : {}),
              failureDomain: zone,
              bootstrap: structuredClone(infra.worker.bootstrap),
              infrastructureRef: {
                apiVersion: templateKind.apiVersion,
                kind: templateKind.kind,
                name: templateName,
              },
            },
          },
        },
      };
      out.push({ target: 'management', object: md });
    }
  }
  return out;
}

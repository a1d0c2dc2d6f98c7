import type { ResourceIdentity } from '@fleet/contracts';

/** How a Machine gets its bootstrap data: a bootstrap provider's template, or a fixed Secret. */
export type Bootstrap =
  { configRef: { apiVersion: string; kind: string; name: string } } | { dataSecretName: string };

/** A worker MachineDeployment (or a MachineSet no MachineDeployment owns) of the cluster. */
export interface WorkerGroup {
  kind: 'MachineDeployment' | 'MachineSet';
  name: string;
  /** `spec.template.spec.failureDomain`, when set. */
  failureDomain?: string;
  /** `spec.template.spec.version` (the kubelet version the Machines get). */
  version?: string;
  bootstrap: Bootstrap;
  infrastructureRef: { apiVersion: string; kind: string; name: string };
  /** `spec.template.metadata.labels` (propagated to Machines; node-role/… ones to Nodes). */
  templateLabels: Record<string, string>;
}

/**
 * An infrastructure provider's machine template, as the Cluster API driver needs it: what
 * instance type it launches, the root disk (the ephemeral-disk capacity), and the template's
 * spec to clone for each allowed instance type.
 */
export interface InfrastructureMachineTemplate {
  name: string;
  instanceType: string;
  /** GiB of the root volume; undefined when the template leaves it to the image. */
  rootVolumeGiB?: number;
  spec: Record<string, unknown>;
}

/**
 * The infrastructure sub-seam of discovery: one per infrastructure provider (`aws/`), chosen
 * from the Cluster's `spec.infrastructureRef.kind`.
 */
export interface InfrastructureTemplateParser {
  /** `AWSCluster` */
  readonly clusterKind: string;
  /** `aws` */
  readonly name: string;
  /** AWSMachineTemplate */
  readonly templateKind: ResourceIdentity;
  parse(
    object: unknown,
  ): { ok: true; value: InfrastructureMachineTemplate } | { ok: false; message: string };
}

/** What discovery learns about a Cluster API workload cluster on its management cluster. */
export interface ClusterApiInfrastructure {
  platform: 'CAPI';
  clusterName: string;
  /** The management-cluster namespace holding the Cluster and its machines. */
  namespace: string;
  /** `aws`: which infrastructure provider the Cluster runs on. */
  infrastructureProvider: string;
  /** `Cluster.status.failureDomains`, else the worker groups' own, sorted. */
  failureDomains: string[];
  /** The worker group the fleet's MachineDeployments copy (template, bootstrap, version). */
  worker: WorkerGroup;
  template: InfrastructureMachineTemplate;
  /** Every worker group of the cluster (the Cluster Autoscaler's candidates). */
  workers: WorkerGroup[];
  workerSelection: { chosen: string; passedOver: { name: string; why: string }[] };
}

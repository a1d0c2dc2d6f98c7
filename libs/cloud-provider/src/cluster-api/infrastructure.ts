import type { InfrastructureMachineTemplate, InfrastructureTemplateParser } from '@fleet/discovery';
import type { ResourceIdentity } from '../types.js';

/** What the cloud says one instance type offers: the MachineDeployment's capacity annotations. */
export interface InstanceCapacity {
  instanceType: string;
  vCpus: number;
  memoryMiB: number;
  /** `kubernetes.io/arch` values: amd64, arm64. */
  architecture: 'amd64' | 'arm64';
  gpu?: { count: number; resourceName: string };
}

/**
 * The infrastructure sub-seam of the Cluster API driver (docs/DESIGN.md § Drivers): everything
 * that knows a cloud. The `aws/` implementation reads EC2 DescribeInstanceTypes and clones
 * AWSMachineTemplates; the rest of cluster-api/ never names a cloud.
 */
export interface InfrastructureProvider {
  readonly template: InfrastructureTemplateParser;
  readonly templateKind: ResourceIdentity;
  /**
   * Capacities of the named types, from the cloud. Unknown names are an error naming them
   * (`InstanceTypeNotOffered`), so a typo never renders a MachineDeployment nobody can launch.
   */
  describeCapacities(
    instanceTypes: readonly string[],
  ): Promise<{ ok: true; capacities: InstanceCapacity[] } | { ok: false; message: string }>;
  /** The worker template's spec with another instance type, for any failure domain. */
  templateSpecFor(
    worker: InfrastructureMachineTemplate,
    instanceType: string,
  ): Record<string, unknown>;
}

/** Why discovery could not produce a complete result; CamelCase, shown as a Degraded reason. */
export type DiscoveryFailureReason =
  | 'InfrastructureNotFound'
  | 'InvalidInfrastructure'
  | 'InvalidProxy'
  | 'InvalidCloudCredential'
  | 'UnsupportedPlatform'
  | 'NoWorkerMachineSet'
  | 'InvalidWorkerMachineSet'
  | 'UserDataSecretNotFound'
  | 'UserDataKeyMissing'
  | 'NoTaggedSubnets'
  | 'WindowsUserData'
  | 'AMINotFound'
  | 'SecurityGroupNotFound'
  | 'CloudLookupFailed'
  | 'KubernetesLookupFailed'
  // Cluster API (cluster-api/discover.ts)
  | 'ClusterNotFound'
  | 'UnsupportedInfrastructure'
  | 'NoWorkerMachineDeployment'
  | 'InfrastructureTemplateNotFound'
  | 'InvalidInfrastructureTemplate'
  | 'BootstrapDataSecretNotFound'
  | 'NoFailureDomains'
  // Hosted control planes (hosted/discover.ts)
  | 'HostedControlPlaneNotFound'
  | 'MultipleHostedControlPlanes'
  | 'HostedClusterReferenceMissing'
  | 'InfraIDMissing'
  | 'RegionMissing'
  // Azure (azure/standalone.ts)
  | 'ImageNotSupported'
  | 'CloudNotSupported'
  | 'NoOutboundConnectivity'
  | 'ImageNotFound'
  | 'SubnetNotFound'
  | 'ManagedIdentityNotFound'
  | 'CloudCredentialsSecretNotFound';

/** What discovery chose and why, for the fleet's report (e.g. which worker MachineSet). */
export interface DiscoveryCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export type DiscoveryResult<T> =
  | { ok: true; infrastructure: T; conditions?: DiscoveryCondition[] }
  | { ok: false; reason: DiscoveryFailureReason; message: string };

export type DiscoveryFailure = Extract<DiscoveryResult<never>, { ok: false }>;

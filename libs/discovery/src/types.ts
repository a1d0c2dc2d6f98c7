/** Why discovery could not produce a complete result; CamelCase, shown as a Degraded reason. */
export type DiscoveryFailureReason =
  | 'InfrastructureNotFound'
  | 'InvalidInfrastructure'
  | 'UnsupportedPlatform'
  | 'NoWorkerMachineSet'
  | 'InvalidWorkerMachineSet'
  | 'UserDataSecretNotFound'
  | 'UserDataKeyMissing'
  | 'NoTaggedSubnets'
  | 'AMINotFound'
  | 'SecurityGroupNotFound'
  | 'CloudLookupFailed'
  | 'KubernetesLookupFailed';

export type DiscoveryResult<T> =
  { ok: true; infrastructure: T } | { ok: false; reason: DiscoveryFailureReason; message: string };

export type DiscoveryFailure = Extract<DiscoveryResult<never>, { ok: false }>;

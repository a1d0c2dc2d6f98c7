import { z } from 'zod';

import type { DiscoveryFailure } from '../types.js';
import { describeIssues } from '../zod-issues.js';

export const CLOUD_CREDENTIAL_NAME = 'cluster';
export const AUTHENTICATION_NAME = 'cluster';

/**
 * How the Cloud Credential Operator gives components their cloud credentials, as CCO itself
 * decides it (cloud-credential-operator pkg/operator/utils: GetOperatorConfiguration reads
 * CloudCredential `cluster`, and a missing object means the default mode; a cluster is STS,
 * "timed token", when the mode is Manual and Authentication `cluster` names a
 * spec.serviceAccountIssuer).
 *
 * - `Default` (`""`), `Mint`, `Passthrough`: CCO answers a CredentialsRequest with a Secret.
 * - `Manual`: CCO does nothing; the admin provides each component's credentials.
 * - `ManualSTS`: Manual with a service-account issuer AWS trusts: components assume an IAM role
 *   with their projected service-account token (AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE).
 */
export type CloudCredentialsMode = 'Default' | 'Mint' | 'Passthrough' | 'Manual' | 'ManualSTS';

export interface CloudCredentials {
  mode: CloudCredentialsMode;
  /** Authentication.spec.serviceAccountIssuer, when the cluster is ManualSTS. */
  serviceAccountIssuer?: string;
}

const CloudCredentialObject = z.object({
  spec: z
    .object({ credentialsMode: z.enum(['', 'Manual', 'Mint', 'Passthrough']).optional() })
    .optional(),
});

const AuthenticationObject = z.object({
  spec: z.object({ serviceAccountIssuer: z.string().optional() }).optional(),
});

/**
 * The credentials mode from CloudCredential `cluster` and Authentication `cluster` (either may
 * be absent: no CloudCredential is CCO's default mode, no issuer is not STS).
 */
export function parseCloudCredentials(
  cloudCredential: unknown,
  authentication: unknown,
): { ok: true; value: CloudCredentials } | DiscoveryFailure {
  const invalid = (what: string, error: z.ZodError): DiscoveryFailure => ({
    ok: false,
    reason: 'InvalidCloudCredential',
    message: `${what}: ${describeIssues(error, '')}`,
  });
  let credentialsMode = '';
  if (cloudCredential !== undefined && cloudCredential !== null) {
    const parsed = CloudCredentialObject.safeParse(cloudCredential);
    if (!parsed.success) return invalid(`CloudCredential ${CLOUD_CREDENTIAL_NAME}`, parsed.error);
    credentialsMode = parsed.data.spec?.credentialsMode ?? '';
  }
  if (credentialsMode !== 'Manual')
    return {
      ok: true,
      value: { mode: credentialsMode === '' ? 'Default' : (credentialsMode as 'Mint') },
    };
  let issuer = '';
  if (authentication !== undefined && authentication !== null) {
    const parsed = AuthenticationObject.safeParse(authentication);
    if (!parsed.success) return invalid(`Authentication ${AUTHENTICATION_NAME}`, parsed.error);
    issuer = parsed.data.spec?.serviceAccountIssuer ?? '';
  }
  return {
    ok: true,
    value: issuer ? { mode: 'ManualSTS', serviceAccountIssuer: issuer } : { mode: 'Manual' },
  };
}

import type { DiscoveryFailure } from '../types.js';
import type { AzureCloudCredentials } from './types.js';

/**
 * The Cloud Credential Operator's keys in an Azure credentials Secret. Only identifiers are kept;
 * the secret itself (client secret) stays in the Secret, which the operand reads by reference.
 */
export function parseAzureCloudCredentials(
  secretRef: { namespace: string; name: string },
  secret: { data?: Record<string, string> },
): { ok: true; value: AzureCloudCredentials } | DiscoveryFailure {
  const where = `Secret ${secretRef.namespace}/${secretRef.name}`;
  const value = (key: string) => {
    const encoded = secret.data?.[key];
    return encoded ? Buffer.from(encoded, 'base64').toString('utf8').trim() : '';
  };
  const missing = ['azure_subscription_id', 'azure_tenant_id', 'azure_client_id'].filter(
    (k) => value(k) === '',
  );
  const authentication = value('azure_client_secret')
    ? 'ClientSecret'
    : value('azure_federated_token_file')
      ? 'FederatedToken'
      : undefined;
  if (authentication === undefined) {
    missing.push('azure_client_secret or azure_federated_token_file');
  }
  if (missing.length > 0 || authentication === undefined) {
    return {
      ok: false,
      reason: 'InvalidCloudCredential',
      message: `${where}: no ${missing.join(', ')}; the operand authenticates with these keys`,
    };
  }
  const resourceGroup = value('azure_resourcegroup');
  const region = value('azure_region');
  return {
    ok: true,
    value: {
      secret: secretRef,
      subscriptionID: value('azure_subscription_id'),
      tenantID: value('azure_tenant_id'),
      clientID: value('azure_client_id'),
      authentication,
      ...(resourceGroup ? { resourceGroup } : {}),
      ...(region ? { region } : {}),
    },
  };
}

/**
 * "env=prod, tier=gold" → { env: 'prod', tier: 'gold' }. The API checks keys and values against
 * Kubernetes' rules; this only splits, and names the entry it cannot split.
 */
export function parseLabels(text: string): { labels: Record<string, string> } | { error: string } {
  const labels: Record<string, string> = {};
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (!entry) continue;
    const eq = entry.indexOf('=');
    if (eq < 1) return { error: `"${entry}" is not key=value` };
    const key = entry.slice(0, eq).trim();
    if (key in labels) return { error: `label ${key} is given twice` };
    labels[key] = entry.slice(eq + 1).trim();
  }
  return { labels };
}

/** Token lifetimes offered; the API takes any future time. */
export const EXPIRY_CHOICES: { value: string; label: string; days: number | null }[] = [
  { value: '1', label: '1 day', days: 1 },
  { value: '7', label: '7 days', days: 7 },
  { value: '30', label: '30 days', days: 30 },
  { value: '90', label: '90 days', days: 90 },
  { value: '365', label: '1 year', days: 365 },
  { value: 'never', label: 'Never', days: null },
];

export function expiresAt(choice: string, now: Date): string | null {
  const days = EXPIRY_CHOICES.find((c) => c.value === choice)?.days ?? null;
  return days === null ? null : new Date(now.getTime() + days * 86_400_000).toISOString();
}

export type TokenStatus = 'Active' | 'Revoked' | 'Expired';

export function tokenStatus(
  token: { revokedAt: string | null; expiresAt: string | null },
  now: Date,
): TokenStatus {
  if (token.revokedAt) return 'Revoked';
  if (token.expiresAt && new Date(token.expiresAt) <= now) return 'Expired';
  return 'Active';
}

export type RegistrationPlatform = 'AWS' | 'AZURE' | 'CAPI';
export type RegistrationTopology = 'STANDALONE' | 'HOSTED';

/** The registration form as typed; every text as entered. */
export interface RegistrationForm {
  name: string;
  platform: RegistrationPlatform;
  topology: RegistrationTopology;
  region: string;
  infraID: string;
  labels: string;
  managementCluster: string;
  hcpNamespace: string;
  clusterApiName: string;
  clusterApiNamespace: string;
  infrastructureProvider: string;
}

/** Cluster API infrastructure providers the API accepts (`CLUSTER_API_INFRASTRUCTURE_PROVIDERS`). */
export const CLUSTER_API_PROVIDERS = ['aws'] as const;
/** Where OpenShift's own Cluster API keeps its Clusters: the API's default namespace. */
export const OPENSHIFT_CLUSTER_API_NAMESPACE = 'openshift-cluster-api';

/** Which optional fields the form shows for this platform and topology. */
export function registrationFields(form: Pick<RegistrationForm, 'platform' | 'topology'>): {
  hosted: boolean;
  clusterApi: boolean;
  managementCluster: boolean;
} {
  const hosted = form.topology === 'HOSTED';
  const clusterApi = form.platform === 'CAPI';
  // A CAPI cluster's Clusters live on a management cluster too; a hosted one's control plane does.
  return { hosted, clusterApi, managementCluster: hosted || clusterApi };
}

export interface RegistrationInput {
  name: string;
  platform: RegistrationPlatform;
  topology: RegistrationTopology;
  region: string;
  infraID?: string;
  labels?: Record<string, string>;
  managementCluster?: string;
  hcpNamespace?: string;
  clusterApiName?: string;
  clusterApiNamespace?: string;
  infrastructureProvider?: string;
}

/**
 * The registerCluster input for what the form shows: trimmed, empty fields left out (the API
 * applies its defaults), and the fields of another platform or topology never sent, even if typed
 * before the choice changed. The API checks the values; only labels are split here, so a label
 * that is not key=value is refused at its field (`input.labels`) before anything is sent.
 */
export function registrationInput(
  form: RegistrationForm,
): { input: RegistrationInput } | { field: string; error: string } {
  const labels = parseLabels(form.labels);
  if ('error' in labels) return { field: 'input.labels', error: `input.labels: ${labels.error}` };
  const shown = registrationFields(form);
  const optional = (key: keyof RegistrationInput, value: string, show = true) =>
    show && value.trim() ? { [key]: value.trim() } : {};
  return {
    input: {
      name: form.name.trim(),
      platform: form.platform,
      topology: form.topology,
      region: form.region.trim(),
      ...optional('infraID', form.infraID),
      ...(Object.keys(labels.labels).length ? { labels: labels.labels } : {}),
      ...optional('managementCluster', form.managementCluster, shown.managementCluster),
      ...optional('hcpNamespace', form.hcpNamespace, shown.hosted),
      ...optional('clusterApiName', form.clusterApiName, shown.clusterApi),
      ...optional('clusterApiNamespace', form.clusterApiNamespace, shown.clusterApi),
      ...optional('infrastructureProvider', form.infrastructureProvider, shown.clusterApi),
    },
  };
}

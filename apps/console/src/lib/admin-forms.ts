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

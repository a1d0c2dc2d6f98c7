/** Display rules of profiles and a cluster's effective state (docs/PROFILES.md). */

export interface FieldSource {
  source: string;
  profile?: string | null;
  profileRevision?: number | null;
}

const SETTING_LABELS: Record<string, string> = {
  enabled: 'Karpenter enabled',
  clusterAutoscalerMode: 'Cluster Autoscaler mode',
  logLevel: 'Log level',
  featureGates: 'Feature gates',
  nodeClassOverrides: 'NodeClass overrides',
  karpenterVersion: 'Karpenter version',
  driftPolicy: 'Hand edits (drift policy)',
};

/** A field of the effective state as an SRE reads it: a setting's name, or "NodePool <name>". */
export function fieldLabel(field: string): string {
  if (field.startsWith('nodePools.')) return `NodePool ${field.slice('nodePools.'.length)}`;
  return SETTING_LABELS[field] ?? field;
}

/** Where a field's value comes from: "default", "override", or "profile <name>@<revision>". */
export function describeSource(source: FieldSource): string {
  if (source.source === 'profile' && source.profile) {
    return source.profileRevision != null
      ? `profile ${source.profile}@${source.profileRevision}`
      : `profile ${source.profile}`;
  }
  return source.source;
}

/** How long a value's text may grow in a table cell before it is cut (the whole in its title). */
export const VALUE_MAX = 120;

/**
 * A value in one line: strings as they are, `null` as what it means for the only nullable
 * setting (karpenterVersion: the fleet's release), everything else as compact JSON, cut at
 * VALUE_MAX characters.
 */
export function formatValue(value: unknown): { text: string; full: string } {
  const full =
    value === null || value === undefined
      ? 'fleet default'
      : typeof value === 'string'
        ? value
        : JSON.stringify(value);
  return { text: full.length > VALUE_MAX ? `${full.slice(0, VALUE_MAX - 1)}…` : full, full };
}

/** The fields a profile spec sets, settings first then its NodePools, for its detail view. */
export function specEntries(spec: unknown): { field: string; value: unknown }[] {
  if (!spec || typeof spec !== 'object') return [];
  const { nodePools, ...settings } = spec as Record<string, unknown>;
  const entries = Object.entries(settings).map(([field, value]) => ({ field, value }));
  if (nodePools && typeof nodePools === 'object') {
    for (const [name, value] of Object.entries(nodePools as Record<string, unknown>)) {
      entries.push({ field: `nodePools.${name}`, value });
    }
  }
  return entries;
}

/** "3 (2 on revision 4)": clusters bound, and how many are on the current revision. */
export function describeBinding(p: {
  boundClusters: number;
  currentClusters: number;
  revision: number;
}): string {
  if (p.boundClusters === 0) return 'none';
  if (p.currentClusters === p.boundClusters)
    return `${p.boundClusters} (all on revision ${p.revision})`;
  return `${p.boundClusters} (${p.currentClusters} on revision ${p.revision})`;
}

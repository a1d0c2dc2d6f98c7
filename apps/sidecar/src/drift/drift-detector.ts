import {
  DRIFT_ENTRIES_MAX,
  DRIFT_FIELDS_MAX,
  type DriftEntry,
  type DriftPolicy,
  compareCodeUnits,
} from '@fleet/contracts';
import type { ClusterTarget } from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import {
  displayPath,
  fleetAppliedFields,
  isFleetManager,
  ownerOf,
  type ManagedFieldsEntry,
} from './managed-fields.js';

/** The part of a Kubernetes object drift detection reads. */
export interface WatchedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    managedFields?: ManagedFieldsEntry[];
  };
}

interface Applied {
  target: ClusterTarget;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** What the fleet's field manager owned right after its apply. */
  fields: Set<string>;
  resourceVersion?: string;
}

/** How long a correction stays in the reports after it was made. */
export const CORRECTION_RETENTION_MS = 60 * 60 * 1000;

const keyOf = (o: { apiVersion?: string; kind?: string; namespace?: string; name?: string }) =>
  `${o.apiVersion ?? ''}/${o.kind ?? ''}/${o.namespace ?? ''}/${o.name ?? ''}`;

const objectKey = (o: WatchedObject) =>
  keyOf({
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata?.name,
    namespace: o.metadata?.namespace,
  });

/**
 * Resource versions are opaque, but every API server in practice (etcd revisions) and the
 * emulator write decimal integers: an event older than the fleet's own apply is skipped, so a
 * late event cannot make a field the fleet just started to apply look taken away.
 */
function older(event: string | undefined, applied: string | undefined): boolean {
  if (!event || !applied || !/^\d+$/.test(event) || !/^\d+$/.test(applied)) return false;
  return BigInt(event) < BigInt(applied);
}

const toTime = (t: string | Date | undefined): number =>
  t === undefined ? NaN : t instanceof Date ? t.getTime() : Date.parse(t);

/**
 * Drift of the objects the fleet applied, from server-side apply's own bookkeeping: after each
 * apply it keeps the fields the fleet's field manager owns (managedFields), and on every watch
 * event compares. A field the fleet owned and no longer owns was changed by another manager (an
 * update that changes a value moves its ownership to the writer; a forced apply takes it) or
 * removed; a deleted object is drift too. Fields the fleet never applied (an admin's label)
 * never appear in that set, so they are never drift.
 */
export class DriftDetector {
  private readonly applied = new Map<string, Applied>();
  private readonly entries = new Map<string, DriftEntry>();

  constructor(
    private readonly options: {
      log: Logger;
      /** An object drifted (urgent: act on the policy) or an entry changed (report it). */
      onChange: (drifted: boolean) => void;
      now?: () => Date;
    },
  ) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** The fleet applied this object (the API server's answer): what it owns now is the baseline. */
  recordApplied(target: ClusterTarget, live: WatchedObject): void {
    const key = objectKey(live);
    this.applied.set(key, {
      target,
      apiVersion: live.apiVersion ?? '',
      kind: live.kind ?? '',
      name: live.metadata?.name ?? '',
      ...(live.metadata?.namespace ? { namespace: live.metadata.namespace } : {}),
      fields: fleetAppliedFields(live.metadata?.managedFields),
      ...(live.metadata?.resourceVersion ? { resourceVersion: live.metadata.resourceVersion } : {}),
    });
    this.resolve(key);
  }

  /**
   * What the fleet wants now; anything else is forgotten (before pruning deletes it, so the
   * fleet's own deletion is never drift). An empty list: Karpenter is disabled, nothing is kept.
   */
  retain(desired: readonly WatchedObject[]): void {
    const keep = new Set(desired.map(objectKey));
    let changed = false;
    for (const key of [...this.applied.keys()]) if (!keep.has(key)) this.applied.delete(key);
    for (const [key, entry] of [...this.entries])
      if (!keep.has(key) && !entry.correctedAt) {
        this.entries.delete(key);
        changed = true;
      }
    if (changed) this.options.onChange(false);
  }

  /** Under REPORT, an object with open drift is left as its editor left it. */
  held(object: WatchedObject, policy: DriftPolicy | undefined): boolean {
    if (policy !== 'REPORT') return false;
    const entry = this.entries.get(objectKey(object));
    return entry !== undefined && !entry.correctedAt;
  }

  /** A watch event of a kind the fleet owns objects of. */
  observe(type: 'ADDED' | 'MODIFIED' | 'DELETED', live: WatchedObject): void {
    const key = objectKey(live);
    const applied = this.applied.get(key);
    if (!applied) return;
    if (older(live.metadata?.resourceVersion, applied.resourceVersion)) return;
    if (type === 'DELETED') {
      this.open(key, applied, 'Deleted', [], 0);
      return;
    }
    const now = fleetAppliedFields(live.metadata?.managedFields);
    const lost = [...applied.fields].filter((p) => !now.has(p)).sort();
    if (lost.length === 0) {
      this.resolve(key);
      return;
    }
    const managedFields = live.metadata?.managedFields ?? [];
    const lastWriter = latestOtherWriter(managedFields);
    const fields = lost.slice(0, DRIFT_FIELDS_MAX).map((p) => {
      // Removed by an update, a field has no owner left: the last other writer removed it.
      const manager = ownerOf(managedFields, p) ?? lastWriter;
      return { path: displayPath(p), ...(manager ? { manager } : {}) };
    });
    this.open(key, applied, 'Modified', fields, lost.length - fields.length);
  }

  private open(
    key: string,
    applied: Applied,
    change: DriftEntry['change'],
    fields: DriftEntry['fields'],
    more: number,
  ): void {
    const before = this.entries.get(key);
    const entry: DriftEntry = {
      target: applied.target,
      apiVersion: applied.apiVersion,
      kind: applied.kind,
      ...(applied.namespace ? { namespace: applied.namespace } : {}),
      name: applied.name,
      change,
      fields,
      ...(more > 0 ? { moreFields: more } : {}),
      detectedAt: before && !before.correctedAt ? before.detectedAt : this.now().toISOString(),
    };
    if (before && !before.correctedAt && JSON.stringify(before) === JSON.stringify(entry)) return;
    this.entries.set(key, entry);
    this.options.log.warn(
      { kind: entry.kind, name: entry.name, change, fields },
      'drift: an object the fleet manages was changed by someone else',
    );
    this.options.onChange(true);
  }

  /** The fleet owns everything it applied again (it re-applied, or the edit was undone). */
  private resolve(key: string): void {
    const entry = this.entries.get(key);
    if (!entry || entry.correctedAt) return;
    this.entries.set(key, { ...entry, correctedAt: this.now().toISOString() });
    this.options.onChange(false);
  }

  /** Open entries first, then the corrections of the last hour, newest first; bounded. */
  list(): DriftEntry[] {
    const now = this.now().getTime();
    for (const [key, e] of [...this.entries])
      if (e.correctedAt && now - Date.parse(e.correctedAt) > CORRECTION_RETENTION_MS)
        this.entries.delete(key);
    const all = [...this.entries.values()];
    const open = all.filter((e) => !e.correctedAt).sort(byDetected);
    const corrected = all
      .filter((e) => e.correctedAt)
      .sort((a, b) => compareCodeUnits(b.correctedAt ?? '', a.correctedAt ?? ''));
    return [...open, ...corrected].slice(0, DRIFT_ENTRIES_MAX);
  }

  /** The Drifted condition for the report. */
  condition(policy: DriftPolicy | undefined): {
    status: 'True' | 'False';
    reason: string;
    message: string;
  } {
    const entries = this.list();
    const open = entries.filter((e) => !e.correctedAt);
    if (open.length > 0) {
      const report = policy === 'REPORT';
      return {
        status: 'True',
        reason: report ? 'LeftInPlace' : 'Correcting',
        message:
          `${open.map(describeEntry).join('; ')}${report ? ' (drift policy REPORT: left in place)' : ' (drift policy CORRECT: being put back)'}`.slice(
            0,
            32768,
          ),
      };
    }
    const corrected = entries.filter((e) => e.correctedAt);
    if (corrected.length > 0)
      return {
        status: 'False',
        reason: 'Corrected',
        message: `put back: ${corrected.map(describeEntry).join('; ')}`.slice(0, 32768),
      };
    return {
      status: 'False',
      reason: 'NoDrift',
      message: 'every field the fleet manages is as the fleet applied it',
    };
  }
}

const byDetected = (a: DriftEntry, b: DriftEntry) => compareCodeUnits(a.detectedAt, b.detectedAt);

function describeEntry(e: DriftEntry): string {
  const name = `${e.kind} ${e.namespace ? `${e.namespace}/` : ''}${e.name}`;
  if (e.change === 'Deleted') return `${name} deleted`;
  const fields = e.fields.map((f) => `${f.path}${f.manager ? ` by ${f.manager}` : ''}`);
  if (e.moreFields) fields.push(`${e.moreFields} more`);
  return `${name}: ${fields.join(', ')}`;
}

/** The manager other than the fleet that wrote the object last (managedFields times). */
function latestOtherWriter(managedFields: readonly ManagedFieldsEntry[]): string | undefined {
  let best: { manager: string; time: number } | undefined;
  for (const e of managedFields) {
    if (!e.manager || isFleetManager(e.manager) || e.subresource) continue;
    const time = toTime(e.time);
    if (!best || (Number.isFinite(time) && time >= best.time)) best = { manager: e.manager, time };
  }
  return best?.manager;
}

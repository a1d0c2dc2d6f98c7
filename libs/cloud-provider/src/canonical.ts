/**
 * Returns a deep copy whose object keys are sorted, arrays keeping their order. Desired state
 * arrives through JSON columns and queues that do not preserve key order; sorting makes the
 * rendered bytes depend only on the content, so equal orders produce identical applies.
 */
export function canonical<T>(value: T): T {
  return sortKeys(value) as T;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) sorted[key] = sortKeys(child);
    }
    return sorted;
  }
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Kubernetes metav1.Time is RFC 3339 with second precision; the API server drops the rest. */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

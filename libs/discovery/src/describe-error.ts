/** One line for a failure from client-node (ApiException with a Status body) or the AWS SDK. */
export function describeError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { name?: unknown; message?: unknown; code?: unknown; body?: unknown };
  if (typeof e.code === 'number') {
    let detail: string | undefined;
    try {
      const body: unknown = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
      const status = body as { message?: unknown; reason?: unknown } | undefined;
      if (typeof status?.message === 'string') detail = status.message;
    } catch {
      // a non-JSON body carries no Status message
    }
    return `HTTP ${e.code}${detail ? `: ${detail}` : ''}`;
  }
  const name = typeof e.name === 'string' ? e.name : 'Error';
  return typeof e.message === 'string' && e.message !== '' ? `${name}: ${e.message}` : name;
}

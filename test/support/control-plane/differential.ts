import { request } from 'node:https';

// The same requests against the emulated and the real kube-apiserver, answers compared after
// masking what differs by nature (uids, timestamps, resourceVersions, generated names). Used by
// test/real-kubernetes/differential.real-spec.ts.

/**
 * Who sends a request: `admin` (system:masters) or any other user name, a user with no rights
 * but the defaults and what the scripts grant it.
 */
export type Identity = string;

/** Compacts the target's history (etcd's compaction, the emulator's watch history). */
export interface CompactionStep {
  compact: true;
}

export type DifferentialStep = RequestStep | CompactionStep;

export const isRequest = (step: DifferentialStep): step is RequestStep => !('compact' in step);

export interface RequestStep {
  as?: Identity;
  method: string;
  /** May hold `{resourceVersion:N}`: the resourceVersion of the object answered at step N. */
  path: string;
  /** A body, or one made from the raw answers of the earlier steps (an update of what was read). */
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** A watch: its stream is read until this many events have come, or for 3 s. */
  events?: number;
  /**
   * Send again (up to 10 s) until the answer is this status, or passes this check: for what a
   * real server applies a moment after the write that asks for it (an RBAC binding, an
   * admission policy), on both targets alike.
   */
  until?: number | ((answer: Answer) => boolean);
  /**
   * What the server authorizes for this request beyond its own verb and resource, as
   * `verb group/resource` (OwnerReferencesPermissionEnforcement's `update` on the owner's
   * finalizers, a CSR approval's `approve` on its signer): counted by the coverage check.
   */
  authorizes?: string[];
  /**
   * The status the real server must answer: a step meant to succeed that does not (a sample the
   * server refuses) would compare two equal refusals and prove nothing.
   */
  expect?: number;
}

export interface DifferentialScript {
  name: string;
  steps: DifferentialStep[];
}

export interface Answer {
  status: number;
  body: unknown;
  /** The Warning headers, when there are any. */
  warnings?: string[];
}

type Credentials = { token: string } | { certPem: string; keyPem: string };

/** How a target is reached over HTTPS by each identity. */
export interface DifferentialTarget {
  url: string;
  caPem: string;
  credentials(identity: Identity): Credentials;
  compact(): Promise<void>;
}

const WATCH_READ_MS = 3_000;

function resolvePath(path: string, earlier: readonly Answer[]): string {
  return path.replace(/\{resourceVersion:(\d+)\}/g, (_, n: string) => {
    const body = earlier[Number(n)]?.body as
      { metadata?: { resourceVersion?: string } } | undefined;
    // None (the step was refused): sent as such, the answers tell.
    return body?.metadata?.resourceVersion ?? 'none';
  });
}

export function send(
  target: DifferentialTarget,
  step: RequestStep,
  earlier: readonly Answer[] = [],
): Promise<Answer> {
  const credentials = target.credentials(step.as ?? 'admin');
  const body: unknown =
    typeof step.body === 'function'
      ? (step.body as (e: readonly Answer[]) => unknown)(earlier)
      : step.body;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.url}${resolvePath(step.path, earlier)}`,
      {
        method: step.method,
        ca: target.caPem,
        ...('token' in credentials ? {} : { cert: credentials.certPem, key: credentials.keyPem }),
        headers: {
          accept: step.accept ?? 'application/json',
          ...('token' in credentials ? { authorization: `Bearer ${credentials.token}` } : {}),
          ...(payload
            ? {
                'content-type': step.contentType ?? 'application/json',
                'content-length': Buffer.byteLength(payload),
              }
            : {}),
        },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          clearTimeout(watchTimer);
          const warning = res.headers.warning;
          resolve({
            status: res.statusCode ?? 0,
            body: step.events !== undefined ? watchEvents(text) : parse(text),
            ...(warning ? { warnings: [warning].flat() } : {}),
          });
          if (step.events !== undefined) req.destroy();
        };
        const watchTimer = setTimeout(finish, step.events !== undefined ? WATCH_READ_MS : 1e9);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (step.events !== undefined && watchEvents(text).length >= step.events) finish();
        });
        res.on('end', finish);
        res.on('error', () => finish());
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${step.method} ${step.path} timed out`)));
    req.on('error', (e) => {
      if (step.events === undefined) reject(e);
    });
    req.end(payload);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // plain text: compared as text
  }
}

/** The complete events of a watch stream read so far. */
function watchEvents(text: string): unknown[] {
  return text
    .split('\n')
    .slice(0, -1)
    .filter((line) => line.trim())
    .map(parse);
}

const MASKED_KEYS = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'lastTransitionTime',
  'time',
  'selfLink',
  // TokenRequest: a new token, valid from now; a CSR's certificate, signed now
  'token',
  'certificate',
  'expirationTimestamp',
]);

/** The answer with what differs by nature replaced by placeholders. */
export function normalise(answer: unknown, key = ''): unknown {
  const value = isTable(answer) ? withoutAges(answer) : answer;
  // Entries are ordered by time (seconds) first: with the times masked, by the rest alone.
  if (key === 'managedFields' && Array.isArray(value))
    return value
      .map((v) => normalise(v))
      .sort((a, b) => managerOrder(a).localeCompare(managerOrder(b)));
  if (Array.isArray(value)) return value.map((v) => normalise(v));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      // The real server's own warnings and ServiceAccount token extras differ by identity kind.
      if (k === 'extra') continue;
      // An owner reference's key in managedFields names the owner's uid.
      const key = k.replace(/^k:\{"uid":"[^"]+"\}$/, 'k:{"uid":"<uid>"}');
      out[key] = MASKED_KEYS.has(k) && v !== undefined && v !== null ? `<${k}>` : normalise(v, k);
    }
    return out;
  }
  if (typeof value === 'string' && key === 'message')
    return value.replace(
      /too old resource version: \d+ \(\d+\)/,
      'too old resource version: <resourceVersion> (<resourceVersion>)',
    );
  if (typeof value === 'string' && key === 'name' && /-[a-z0-9]{5}$/.test(value)) {
    return value.replace(/-[a-z0-9]{5}$/, '-<generated>');
  }
  return value;
}

/**
 * As client-go does: a 429 with a retry delay is sent again after it (kube-apiserver answers so
 * while the watch cache of a just-created CRD initialises).
 */
async function sendRetryingTooManyRequests(
  target: DifferentialTarget,
  step: RequestStep,
  earlier: readonly Answer[],
): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send(target, step, earlier);
    const retryAfter = (answer.body as { details?: { retryAfterSeconds?: number } } | undefined)
      ?.details?.retryAfterSeconds;
    if (answer.status !== 429 || retryAfter === undefined || attempt === 10) return answer;
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  }
}

const managerOrder = (entry: unknown): string => {
  const e = entry as Record<string, unknown>;
  return [e.operation, e.manager, e.apiVersion, e.subresource ?? ''].join('\u0000');
};

interface Table {
  kind: 'Table';
  columnDefinitions: { name: string }[];
  rows: { cells: unknown[] }[];
}

const isTable = (value: unknown): value is Table =>
  !!value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'Table';

/** A Table's Age cells say how long ago each object was created: masked. */
function withoutAges(table: Table): Table {
  const age = table.columnDefinitions.findIndex((c) => c.name === 'Age');
  if (age < 0) return table;
  return {
    ...table,
    rows: table.rows.map((row) => ({
      ...row,
      cells: row.cells.map((cell, i) => (i === age ? '<age>' : cell)),
    })),
  };
}

/** Runs a script on a target: each step's normalised answer. */
export async function runScript(
  target: DifferentialTarget,
  script: DifferentialScript,
): Promise<Answer[]> {
  const raw: Answer[] = [];
  for (const step of script.steps) {
    if (!isRequest(step)) {
      await target.compact();
      raw.push({ status: 0, body: 'compacted' });
      continue;
    }
    const settled = (a: Answer) =>
      step.until === undefined ||
      (typeof step.until === 'number' ? a.status === step.until : step.until(a));
    let answer = await sendRetryingTooManyRequests(target, step, raw);
    const deadline = Date.now() + 10_000;
    while (!settled(answer) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await sendRetryingTooManyRequests(target, step, raw);
    }
    raw.push(answer);
  }
  return raw.map((a) => ({ ...a, body: normalise(a.body) }));
}

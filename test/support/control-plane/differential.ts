import { request } from 'node:https';

// The same requests against the emulated and the real kube-apiserver, answers compared after
// masking what differs by nature (uids, timestamps, resourceVersions, generated names). Used by
// test/real-kubernetes/differential.real-spec.ts.

/** Who sends a request: an admin (system:masters) or a user with no rights but the defaults. */
export type Identity = 'admin' | 'bob';

export interface DifferentialStep {
  as?: Identity;
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  /**
   * Send again (up to 10 s) until the status is this one: for what a real server applies a moment
   * after the write that asks for it (an RBAC binding, an admission policy), on both targets alike.
   */
  until?: number;
}

export interface DifferentialScript {
  name: string;
  steps: DifferentialStep[];
}

export interface Answer {
  status: number;
  body: unknown;
}

/** How a target is reached over HTTPS by each identity. */
export interface DifferentialTarget {
  url: string;
  caPem: string;
  credentials: Record<Identity, { token: string } | { certPem: string; keyPem: string }>;
}

export function send(target: DifferentialTarget, step: DifferentialStep): Promise<Answer> {
  const credentials = target.credentials[step.as ?? 'admin'];
  const payload = step.body === undefined ? undefined : JSON.stringify(step.body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.url}${step.path}`,
      {
        method: step.method,
        ca: target.caPem,
        ...('token' in credentials ? {} : { cert: credentials.certPem, key: credentials.keyPem }),
        headers: {
          accept: 'application/json',
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
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // a watch stream or plain text: compared as text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${step.method} ${step.path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const MASKED_KEYS = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'lastTransitionTime',
  'time',
  'selfLink',
  // TokenRequest: a new token, valid from now
  'token',
  'expirationTimestamp',
]);

/** The answer with what differs by nature replaced by placeholders. */
export function normalise(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => normalise(v));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      // The real server's own warnings and ServiceAccount token extras differ by identity kind.
      if (k === 'extra') continue;
      out[k] = MASKED_KEYS.has(k) && v !== undefined && v !== null ? `<${k}>` : normalise(v, k);
    }
    return out;
  }
  if (typeof value === 'string' && key === 'name' && /-[a-z0-9]{5}$/.test(value)) {
    return value.replace(/-[a-z0-9]{5}$/, '-<generated>');
  }
  return value;
}

/** Runs a script on a target: each step's normalised answer. */
export async function runScript(
  target: DifferentialTarget,
  script: DifferentialScript,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const step of script.steps) {
    let answer = await send(target, step);
    const deadline = Date.now() + 10_000;
    while (step.until !== undefined && answer.status !== step.until && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await send(target, step);
    }
    answers.push({ status: answer.status, body: normalise(answer.body) });
  }
  return answers;
}

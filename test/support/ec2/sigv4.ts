import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignedRequest {
  method: string;
  /** Path and query exactly as they came over the wire. */
  url: string;
  /** Node's rawHeaders: alternating names and values, duplicates preserved. */
  rawHeaders: string[];
  body: Buffer;
}

export type AuthRejection = { code: string; message: string; status: number };

// EC2 tolerates 15 minutes of clock skew in either direction before RequestExpired.
const MAX_SKEW_MS = 15 * 60 * 1000;

/**
 * Verifies an AWS Signature Version 4 `Authorization` header the way EC2 does, recomputing the
 * canonical request from the bytes received; returns undefined when the request is authentic.
 */
export function verifySigV4(
  req: SignedRequest,
  expected: { credentials: SigV4Credentials; region: string; service: string; now?: Date },
): AuthRejection | undefined {
  const headers = headerMap(req.rawHeaders);
  const authorization = headers.get('authorization')?.[0];
  if (authorization === undefined) {
    if (new URL(req.url, 'http://x').searchParams.has('X-Amz-Signature')) {
      return incomplete(
        'Query-string (presigned) authentication is not supported by the emulator.',
      );
    }
    return {
      code: 'MissingAuthenticationToken',
      message: 'Request is missing Authentication Token',
      status: 401,
    };
  }

  const match = /^AWS4-HMAC-SHA256 (.*)$/.exec(authorization.trim());
  if (!match?.[1]) {
    return incomplete(`Unsupported or malformed Authorization header: ${authorization}`);
  }
  const parts = new Map<string, string>();
  for (const piece of match[1].split(',')) {
    const eq = piece.indexOf('=');
    if (eq > 0) parts.set(piece.slice(0, eq).trim(), piece.slice(eq + 1).trim());
  }
  for (const required of ['Credential', 'SignedHeaders', 'Signature']) {
    if (!parts.get(required)) {
      return incomplete(
        `Authorization header requires '${required}' parameter. Authorization=${authorization}`,
      );
    }
  }
  const credential = parts.get('Credential')!;
  const signedHeaders = parts.get('SignedHeaders')!;
  const signature = parts.get('Signature')!;

  const scope = credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request') {
    return incomplete(
      `Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/aws4_request, got '${credential}'.`,
    );
  }
  const [accessKeyId, scopeDate, scopeRegion, scopeService] = scope as [
    string,
    string,
    string,
    string,
  ];
  if (accessKeyId !== expected.credentials.accessKeyId) {
    return {
      code: 'AuthFailure',
      message: 'AWS was not able to validate the provided access credentials',
      status: 401,
    };
  }
  const securityToken = headers.get('x-amz-security-token')?.[0];
  if (securityToken !== expected.credentials.sessionToken) {
    return {
      code: 'AuthFailure',
      message: 'The security token included in the request is invalid.',
      status: 401,
    };
  }

  const amzDate = headers.get('x-amz-date')?.[0];
  if (amzDate === undefined) {
    return incomplete(
      "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
    );
  }
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined) {
    return incomplete(`Invalid X-Amz-Date '${amzDate}'; expected the ISO 8601 basic format.`);
  }
  const now = expected.now ?? new Date();
  if (Math.abs(now.getTime() - signedAt.getTime()) > MAX_SKEW_MS) {
    return {
      code: 'RequestExpired',
      message: `Request has expired. Timestamp date is ${amzDate}`,
      status: 400,
    };
  }
  if (scopeDate !== amzDate.slice(0, 8)) {
    return {
      code: 'SignatureDoesNotMatch',
      message: `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${scopeDate}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`,
      status: 403,
    };
  }
  if (scopeRegion !== expected.region) {
    return {
      code: 'AuthFailure',
      message: `Credential should be scoped to a valid region, not '${scopeRegion}'.`,
      status: 401,
    };
  }
  if (scopeService !== expected.service) {
    return {
      code: 'SignatureDoesNotMatch',
      message: `Credential should be scoped to correct service: '${expected.service}'.`,
      status: 403,
    };
  }

  const signedNames = signedHeaders.split(';');
  if (!signedNames.includes('host')) {
    return incomplete(`'Host' must be a signed header. SignedHeaders=${signedHeaders}`);
  }
  const canonicalHeaders: string[] = [];
  for (const name of signedNames) {
    const values = headers.get(name);
    if (values === undefined) {
      return signatureMismatch();
    }
    canonicalHeaders.push(`${name}:${values.map(collapseSpaces).join(',')}\n`);
  }

  const payloadHash = sha256Hex(req.body);
  const declaredPayloadHash = headers.get('x-amz-content-sha256')?.[0];
  if (declaredPayloadHash !== undefined && declaredPayloadHash !== payloadHash) {
    return {
      code: 'SignatureDoesNotMatch',
      message: 'The provided x-amz-content-sha256 header does not match what was computed.',
      status: 403,
    };
  }

  const url = new URL(req.url, 'http://placeholder');
  const rawPath = req.url.split('?')[0] ?? '/';
  const canonicalRequest = [
    req.method.toUpperCase(),
    canonicalUri(rawPath),
    canonicalQuery(url.search),
    canonicalHeaders.join(''),
    signedHeaders,
    payloadHash,
  ].join('\n');
  const credentialScope = `${scopeDate}/${scopeRegion}/${scopeService}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    credentialScope,
    sha256Hex(canonicalRequest),
  ].join('\n');

  const kDate = hmac(`AWS4${expected.credentials.secretAccessKey}`, scopeDate);
  const kRegion = hmac(kDate, scopeRegion);
  const kService = hmac(kRegion, scopeService);
  const kSigning = hmac(kService, 'aws4_request');
  const computed = createHmac('sha256', kSigning).update(stringToSign).digest();
  const provided = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : undefined;
  if (provided === undefined || !timingSafeEqual(provided, computed)) {
    return signatureMismatch();
  }
  return undefined;
}

function incomplete(message: string): AuthRejection {
  return { code: 'IncompleteSignature', message, status: 400 };
}

function signatureMismatch(): AuthRejection {
  return {
    code: 'SignatureDoesNotMatch',
    message:
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    status: 403,
  };
}

function headerMap(raw: string[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const list = map.get(name) ?? [];
    list.push(raw[i + 1]!);
    map.set(name, list);
  }
  return map;
}

function collapseSpaces(value: string): string {
  return value.trim().replace(/\s+/g, ' ');
}

function parseAmzDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** RFC 3986 unreserved characters stay; everything else is percent-encoded in upper case. */
function uriEscape(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

// Non-S3 services escape each path segment once more, on top of the wire encoding.
function canonicalUri(rawPath: string): string {
  if (rawPath === '' || rawPath === '/') return '/';
  const segments: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `/${segments.map(uriEscape).join('/')}`;
  return rawPath.endsWith('/') && segments.length > 0 ? `${normalized}/` : normalized;
}

function canonicalQuery(search: string): string {
  if (search === '' || search === '?') return '';
  const pairs: [string, string][] = [];
  for (const piece of search.slice(1).split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const key = eq < 0 ? piece : piece.slice(0, eq);
    const value = eq < 0 ? '' : piece.slice(eq + 1);
    if (key === 'X-Amz-Signature') continue;
    pairs.push([uriEscape(safeDecode(key)), uriEscape(safeDecode(value))]);
  }
  pairs.sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

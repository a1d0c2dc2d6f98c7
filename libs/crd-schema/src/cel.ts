import { isIP } from 'node:net';

import { Environment, Optional } from '@marcbachmann/cel-js';

import { dns1123LabelErrors, dns1123SubdomainErrors, qualifiedNameErrors } from './json.js';

// Kubernetes ships CEL extension libraries (ip, cidr, url, regex, quantity, format) that
// cel-js does not have. These are the ones the fixture CRDs call; semantics follow
// k8s.io/apiserver/pkg/cel/library.

class CelIP {
  constructor(readonly addr: string) {}
}
class CelCIDR {
  constructor(
    readonly addr: string,
    readonly prefix: number,
  ) {}
}
class CelURL {
  constructor(readonly url: URL) {}
}
class CelQuantity {
  constructor(readonly value: number) {}
}
class CelFormatLib {}
class CelFormatter {
  constructor(readonly validate: (s: string) => string[]) {}
}

function strictIP(s: string): number {
  const fam = isIP(s);
  if (fam === 4 && s.split('.').some((p) => p.length > 1 && p.startsWith('0'))) return 0;
  if (fam === 6 && (s.includes('%') || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(s))) return 0;
  return fam;
}

function parseCIDR(s: string): CelCIDR | undefined {
  const i = s.indexOf('/');
  if (i < 0) return undefined;
  const addr = s.slice(0, i);
  const pfx = s.slice(i + 1);
  const fam = strictIP(addr);
  if (!fam || !/^\d{1,3}$/.test(pfx)) return undefined;
  const n = Number(pfx);
  if (n > (fam === 4 ? 32 : 128)) return undefined;
  return new CelCIDR(addr, n);
}

const QUANTITY = /^([+-]?[0-9.]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$/;
const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export function parseQuantity(s: string): number | undefined {
  const m = QUANTITY.exec(s);
  if (!m || !/^[+-]?(\d+\.?\d*|\.\d+)$/.test(m[1]!)) return undefined;
  const num = Number(m[1]);
  const suf = m[2] ?? '';
  if (suf.startsWith('e') || suf.startsWith('E')) return num * 10 ** Number(suf.slice(1));
  const mult = SUFFIX[suf];
  return mult === undefined ? undefined : num * mult;
}

function quantity(s: string): CelQuantity {
  const v = parseQuantity(s);
  if (v === undefined)
    throw new Error(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
  return new CelQuantity(v);
}

const cmp = (a: number, b: number): bigint => (a < b ? -1n : a > b ? 1n : 0n);

function formatter(fn: (s: string) => string[]): CelFormatter {
  return new CelFormatter(fn);
}

const FORMATS: Record<string, CelFormatter> = {
  dns1123Subdomain: formatter(dns1123SubdomainErrors),
  dns1123Label: formatter(dns1123LabelErrors),
  qualifiedName: formatter(qualifiedNameErrors),
  dns1123LabelPrefix: formatter((s) => dns1123LabelErrors(s.endsWith('-') ? s.slice(0, -1) : s)),
  dns1123SubdomainPrefix: formatter((s) =>
    dns1123SubdomainErrors(s.endsWith('-') ? s.slice(0, -1) : s),
  ),
  uuid: formatter((s) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(s)
      ? []
      : ['invalid UUID'],
  ),
  uri: formatter((s) => (URL.canParse(s) ? [] : ['invalid URI'])),
};

let sharedEnv: Environment | undefined;

export function celEnvironment(): Environment {
  if (sharedEnv) return sharedEnv;
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
    .registerVariable('self', 'dyn')
    .registerVariable('oldSelf', 'dyn')
    .registerType('net.IP', CelIP)
    .registerType('net.CIDR', CelCIDR)
    .registerType('net.URL', CelURL)
    .registerType('kubernetes.Quantity', CelQuantity)
    .registerType('kubernetes.FormatLib', CelFormatLib)
    .registerType('kubernetes.NamedFormat', CelFormatter)
    .registerConstant('format', 'kubernetes.FormatLib', new CelFormatLib())
    // ip library
    .registerFunction('isIP(string): bool', (s: string) => strictIP(s) !== 0)
    .registerFunction('ip(string): net.IP', (s: string) => {
      if (!strictIP(s))
        throw new Error(`IP Address "${s}" parse error during conversion from string`);
      return new CelIP(s);
    })
    .registerFunction('net.IP.family(): int', (ip: CelIP) => BigInt(strictIP(ip.addr)))
    .registerFunction(
      'net.IP.isLoopback(): bool',
      (ip: CelIP) => ip.addr.startsWith('127.') || ip.addr === '::1',
    )
    .registerFunction(
      'net.IP.isUnspecified(): bool',
      (ip: CelIP) => ip.addr === '0.0.0.0' || ip.addr === '::',
    )
    .registerFunction('string(net.IP): string', (ip: CelIP) => ip.addr)
    // cidr library
    .registerFunction('isCIDR(string): bool', (s: string) => parseCIDR(s) !== undefined)
    .registerFunction('cidr(string): net.CIDR', (s: string) => {
      const c = parseCIDR(s);
      if (!c) throw new Error(`network address parse error during conversion from string: ${s}`);
      return c;
    })
    .registerFunction('net.CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.prefix))
    .registerFunction('net.CIDR.ip(): net.IP', (c: CelCIDR) => new CelIP(c.addr))
    .registerFunction('string(net.CIDR): string', (c: CelCIDR) => `${c.addr}/${c.prefix}`)
    // url library
    .registerFunction(
      'isURL(string): bool',
      (s: string) => URL.canParse(s) && /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s),
    )
    .registerFunction('url(string): net.URL', (s: string) => {
      if (!URL.canParse(s)) throw new Error(`URL parse error during conversion from string: ${s}`);
      return new CelURL(new URL(s));
    })
    .registerFunction('net.URL.getScheme(): string', (u: CelURL) =>
      u.url.protocol.replace(/:$/, ''),
    )
    .registerFunction('net.URL.getHost(): string', (u: CelURL) => u.url.host)
    .registerFunction('net.URL.getHostname(): string', (u: CelURL) =>
      u.url.hostname.replace(/^\[|\]$/g, ''),
    )
    .registerFunction('net.URL.getPort(): string', (u: CelURL) => u.url.port)
    .registerFunction('net.URL.getEscapedPath(): string', (u: CelURL) => u.url.pathname)
    .registerFunction('net.URL.getQuery(): map<string, list<string>>', (u: CelURL) => {
      const q = new Map<string, string[]>();
      for (const [k, v] of u.url.searchParams) q.set(k, [...(q.get(k) ?? []), v]);
      return q;
    })
    // regex library
    .registerFunction(
      'string.find(string): string',
      (s: string, re: string) => new RegExp(re).exec(s)?.[0] ?? '',
    )
    .registerFunction('string.findAll(string): list<string>', (s: string, re: string) =>
      [...s.matchAll(new RegExp(re, 'g'))].map((m) => m[0]),
    )
    // quantity library
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    .registerFunction('quantity(string): kubernetes.Quantity', quantity)
    .registerFunction(
      'kubernetes.Quantity.compareTo(kubernetes.Quantity): int',
      (a: CelQuantity, b: CelQuantity) => cmp(a.value, b.value),
    )
    .registerFunction(
      'kubernetes.Quantity.isGreaterThan(kubernetes.Quantity): bool',
      (a: CelQuantity, b: CelQuantity) => a.value > b.value,
    )
    .registerFunction(
      'kubernetes.Quantity.isLessThan(kubernetes.Quantity): bool',
      (a: CelQuantity, b: CelQuantity) => a.value < b.value,
    )
    .registerFunction('kubernetes.Quantity.sign(): int', (a: CelQuantity) => cmp(a.value, 0))
    .registerFunction('kubernetes.Quantity.asInteger(): int', (a: CelQuantity) =>
      BigInt(Math.trunc(a.value)),
    )
    .registerFunction(
      'kubernetes.Quantity.asApproximateFloat(): double',
      (a: CelQuantity) => a.value,
    )
    .registerFunction(
      'kubernetes.Quantity.add(kubernetes.Quantity): kubernetes.Quantity',
      (a: CelQuantity, b: CelQuantity) => new CelQuantity(a.value + b.value),
    )
    .registerFunction(
      'kubernetes.Quantity.sub(kubernetes.Quantity): kubernetes.Quantity',
      (a: CelQuantity, b: CelQuantity) => new CelQuantity(a.value - b.value),
    )
    // format library
    .registerFunction(
      'kubernetes.FormatLib.dns1123Subdomain(): kubernetes.NamedFormat',
      () => FORMATS.dns1123Subdomain!,
    )
    .registerFunction(
      'kubernetes.FormatLib.dns1123Label(): kubernetes.NamedFormat',
      () => FORMATS.dns1123Label!,
    )
    .registerFunction(
      'kubernetes.FormatLib.qualifiedName(): kubernetes.NamedFormat',
      () => FORMATS.qualifiedName!,
    )
    .registerFunction('kubernetes.FormatLib.uuid(): kubernetes.NamedFormat', () => FORMATS.uuid!)
    .registerFunction('kubernetes.FormatLib.uri(): kubernetes.NamedFormat', () => FORMATS.uri!)
    .registerFunction(
      'kubernetes.FormatLib.named(string): optional<kubernetes.NamedFormat>',
      (_l: CelFormatLib, n: string) => (FORMATS[n] ? Optional.of(FORMATS[n]) : Optional.none()),
    )
    .registerFunction(
      'kubernetes.NamedFormat.validate(string): optional<list<string>>',
      (f: CelFormatter, s: string) => {
        const errs = f.validate(s);
        return errs.length ? Optional.of(errs) : Optional.none();
      },
    );
  sharedEnv = env;
  return env;
}

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface CompiledRule {
  rule: ValidationRule;
  usesOldSelf: boolean;
  program?: (ctx: Record<string, unknown>) => unknown;
  messageProgram?: (ctx: Record<string, unknown>) => unknown;
  error?: string;
}

export interface CelCompileFailure {
  crd: string;
  path: string;
  rule: string;
  error: string;
}

const cache = new Map<string, CompiledRule>();

function referencesOldSelf(rule: string): boolean {
  // Strip string literals so 'oldSelf' inside a message-like literal is not counted.
  return /\boldSelf\b/.test(rule.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, ''));
}

export function compileRule(rule: ValidationRule): CompiledRule {
  const key = `${rule.rule}\u0000${rule.messageExpression ?? ''}`;
  const hit = cache.get(key);
  if (hit) return { ...hit, rule };
  const env = celEnvironment();
  const compiled: CompiledRule = { rule, usesOldSelf: referencesOldSelf(rule.rule) };
  try {
    const checked = env.check(rule.rule);
    if (!checked.valid) throw checked.error ?? new Error('type check failed');
    compiled.program = env.parse(rule.rule);
    if (rule.messageExpression) {
      compiled.messageProgram = env.parse(rule.messageExpression);
    }
  } catch (e) {
    compiled.error = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? 'compile error';
  }
  cache.set(key, compiled);
  return compiled;
}

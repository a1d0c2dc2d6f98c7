import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { API_CONFIG, type ApiConfig } from '../config.js';

/** The API's own routes; the console must never answer for them, even with its SPA fallback. */
const API_ROUTES = /^\/(graphql|healthz|readyz|version|metrics|v1|auth)(\/|$|\?)/;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
};

/** Files worth compressing; scripts/build.mjs writes their .br and .gz beside them. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);

/** Precompressed variants, preferred first: the suffix on disk and the Content-Encoding. */
const VARIANTS = [
  { suffix: '.br', encoding: 'br' },
  { suffix: '.gz', encoding: 'gzip' },
] as const;
export type ContentEncoding = (typeof VARIANTS)[number]['encoding'];

/**
 * The encoding to answer with, given the request's Accept-Encoding and the variants on disk:
 * Brotli before gzip, each only when the client accepts it (a q of 0 refuses; `*` accepts what
 * is not named), identity otherwise.
 */
export function pickEncoding(
  acceptEncoding: string | undefined,
  available: ReadonlySet<ContentEncoding>,
): ContentEncoding | undefined {
  const q = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (!name) continue;
    const weight = params.find((p) => p.startsWith('q='));
    const value = weight === undefined ? 1 : Number(weight.slice(2));
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const accepts = (encoding: string) =>
    (q.get(encoding) ?? (encoding === 'gzip' ? q.get('x-gzip') : undefined) ?? q.get('*') ?? 0) > 0;
  return VARIANTS.find((v) => available.has(v.encoding) && accepts(v.encoding))?.encoding;
}

/**
 * Serves the built console on the API's own origin, so the API's CSRF rules hold unchanged and no
 * CORS opening is needed. Client-side routes (/clusters/…) get index.html; hashed assets are
 * cached for good, index.html is revalidated on every load (it names the current assets). Text
 * files go out precompressed (the build's .br or .gz) to a client that accepts it.
 */
@Injectable()
export class ConsoleStaticMiddleware implements NestMiddleware {
  private readonly root: string | null;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    const dir = config.CONSOLE_DIR;
    this.root = existsSync(join(dir, 'index.html')) ? normalize(dir) : null;
  }

  use(
    req: IncomingMessage & { originalUrl?: string },
    res: ServerResponse,
    next: () => void,
  ): void {
    // Express strips the mount path from req.url; the whole path is what the browser asked for.
    const url = req.originalUrl ?? req.url ?? '/';
    if (!this.root || (req.method !== 'GET' && req.method !== 'HEAD') || API_ROUTES.test(url)) {
      return next();
    }
    let path: string;
    try {
      path = decodeURIComponent(url.split('?')[0]!);
    } catch {
      return next();
    }
    const file = normalize(join(this.root, path));
    if (!file.startsWith(this.root + sep) && file !== this.root) return next();
    // The compressed copies are served in place of their file, never by their own name.
    if (VARIANTS.some((v) => path.endsWith(v.suffix))) return next();
    if (path !== '/' && existsSync(file) && statSync(file).isFile()) {
      return this.send(res, req, file, path.startsWith('/assets/'));
    }
    // An asset that is not there is a 404, not the app: a stale index.html must fail visibly.
    if (extname(path) && path !== '/') return next();
    this.send(res, req, join(this.root, 'index.html'), false);
  }

  private send(res: ServerResponse, req: IncomingMessage, file: string, immutable: boolean) {
    const ext = extname(file);
    let body = file;
    if (COMPRESSIBLE.has(ext)) {
      // Whether compressed or not, the answer depends on the request's Accept-Encoding.
      res.setHeader('vary', 'Accept-Encoding');
      const available = new Set(
        VARIANTS.filter((v) => existsSync(file + v.suffix)).map((v) => v.encoding),
      );
      const encoding = pickEncoding(req.headers['accept-encoding'], available);
      if (encoding) {
        body = file + VARIANTS.find((v) => v.encoding === encoding)!.suffix;
        res.setHeader('content-encoding', encoding);
      }
    }
    res.statusCode = 200;
    res.setHeader('content-type', TYPES[ext] ?? 'application/octet-stream');
    res.setHeader('content-length', statSync(body).size);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (ext === '.html') {
      res.setHeader('x-frame-options', 'DENY');
      res.setHeader(
        'content-security-policy',
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; frame-ancestors 'none'",
      );
    }
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(body).pipe(res);
  }
}

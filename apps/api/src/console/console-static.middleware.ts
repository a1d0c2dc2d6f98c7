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

/**
 * Serves the built console on the API's own origin, so the API's CSRF rules hold unchanged and no
 * CORS opening is needed. Client-side routes (/clusters/…) get index.html; hashed assets are
 * cached for good, index.html never (it names the current assets).
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
    if (path !== '/' && existsSync(file) && statSync(file).isFile()) {
      return this.send(res, req, file, path.startsWith('/assets/'));
    }
    // An asset that is not there is a 404, not the app: a stale index.html must fail visibly.
    if (extname(path) && path !== '/') return next();
    this.send(res, req, join(this.root, 'index.html'), false);
  }

  private send(res: ServerResponse, req: IncomingMessage, file: string, immutable: boolean) {
    res.statusCode = 200;
    res.setHeader('content-type', TYPES[extname(file)] ?? 'application/octet-stream');
    res.setHeader('content-length', statSync(file).size);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader(
      'cache-control',
      immutable ? 'public, max-age=31536000, immutable' : 'no-cache, no-store',
    );
    if (extname(file) === '.html') {
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
    createReadStream(file).pipe(res);
  }
}

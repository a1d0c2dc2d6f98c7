import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface InitialAsset {
  /** The path index.html names, e.g. /assets/index-abc123.js. */
  path: string;
  kind: 'js' | 'css';
  bytes: number;
  gzipBytes: number;
}

export interface InitialAssets {
  assets: InitialAsset[];
  js: { bytes: number; gzipBytes: number };
  css: { bytes: number; gzipBytes: number };
}

export interface Budget {
  initialJsGzipBytes: number;
  initialCssGzipBytes: number;
}

/** apps/console/budget.json, read from the repository root (the working directory of tests and bench). */
export function readBudget(root = process.cwd()): Budget {
  const raw = JSON.parse(readFileSync(join(root, 'apps', 'console', 'budget.json'), 'utf8')) as
    Partial<Budget> | undefined;
  for (const key of ['initialJsGzipBytes', 'initialCssGzipBytes'] as const) {
    if (typeof raw?.[key] !== 'number' || !(raw[key] > 0)) {
      throw new Error(`apps/console/budget.json: ${key} must be a positive number of bytes`);
    }
  }
  return raw as Budget;
}

/**
 * What a built console's index.html makes the browser fetch before the first paint: its module
 * scripts, modulepreloads and stylesheets (the lazily loaded pages are not among them), each
 * with its size raw and gzipped (zlib's default level, about what a server's gzip sends).
 */
export function measureInitialAssets(consoleDir: string): InitialAssets {
  const html = readFileSync(join(consoleDir, 'index.html'), 'utf8');
  const found: { path: string; kind: 'js' | 'css' }[] = [];
  for (const tag of html.match(/<(script|link)\b[^>]*>/g) ?? []) {
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
    if (tag.startsWith('<script') && attr('type') === 'module' && attr('src')) {
      found.push({ path: attr('src')!, kind: 'js' });
    } else if (tag.startsWith('<link') && attr('rel') === 'modulepreload' && attr('href')) {
      found.push({ path: attr('href')!, kind: 'js' });
    } else if (tag.startsWith('<link') && attr('rel') === 'stylesheet' && attr('href')) {
      found.push({ path: attr('href')!, kind: 'css' });
    }
  }
  if (!found.some((a) => a.kind === 'js')) {
    throw new Error(`${join(consoleDir, 'index.html')} loads no module script`);
  }
  const assets = found.map(({ path, kind }) => {
    const body = readFileSync(join(consoleDir, path.replace(/^\//, '')));
    return { path, kind, bytes: body.length, gzipBytes: gzipSync(body).length };
  });
  const total = (kind: 'js' | 'css') =>
    assets
      .filter((a) => a.kind === kind)
      .reduce((t, a) => ({ bytes: t.bytes + a.bytes, gzipBytes: t.gzipBytes + a.gzipBytes }), {
        bytes: 0,
        gzipBytes: 0,
      });
  return { assets, js: total('js'), css: total('css') };
}

/** The budget's verdict: empty when within it, otherwise one line per limit exceeded. */
export function overBudget(measured: InitialAssets, budget: Budget): string[] {
  const kb = (n: number) => `${(n / 1000).toFixed(1)} kB`;
  const list = (kind: 'js' | 'css') =>
    measured.assets
      .filter((a) => a.kind === kind)
      .sort((a, b) => b.gzipBytes - a.gzipBytes)
      .map((a) => `${a.path} ${kb(a.gzipBytes)}`)
      .join(', ');
  const over: string[] = [];
  if (measured.js.gzipBytes > budget.initialJsGzipBytes) {
    over.push(
      `initial JavaScript is ${kb(measured.js.gzipBytes)} gzipped, over the budget of ${kb(budget.initialJsGzipBytes)} (apps/console/budget.json): ${list('js')}`,
    );
  }
  if (measured.css.gzipBytes > budget.initialCssGzipBytes) {
    over.push(
      `initial CSS is ${kb(measured.css.gzipBytes)} gzipped, over the budget of ${kb(budget.initialCssGzipBytes)} (apps/console/budget.json): ${list('css')}`,
    );
  }
  return over;
}

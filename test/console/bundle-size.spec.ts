import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureInitialAssets, overBudget, readBudget } from './bundle-size.js';

describe('the initial-asset measure behind the console budget', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-budget-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'assets'));
  // Incompressible-ish content so gzip cannot shrink it to nothing.
  const noise = (n: number) =>
    Array.from({ length: n }, (_, i) => ((i * 2654435761) >>> 0).toString(36)).join('');
  writeFileSync(join(dir, 'assets', 'index-a.js'), noise(2000));
  writeFileSync(join(dir, 'assets', 'shared-b.js'), noise(500));
  writeFileSync(join(dir, 'assets', 'Page-c.js'), noise(5000));
  writeFileSync(join(dir, 'assets', 'index-d.css'), 'a{color:red}'.repeat(100));
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html><html><head>
    <script type="module" crossorigin src="/assets/index-a.js"></script>
    <link rel="modulepreload" crossorigin href="/assets/shared-b.js">
    <link rel="stylesheet" crossorigin href="/assets/index-d.css">
    </head><body></body></html>`,
  );

  it('counts the module script, modulepreloads and stylesheets, not the lazy pages', () => {
    const m = measureInitialAssets(dir);
    expect(m.assets.map((a) => a.path)).toEqual([
      '/assets/index-a.js',
      '/assets/shared-b.js',
      '/assets/index-d.css',
    ]);
    expect(m.js.bytes).toBe(noise(2000).length + noise(500).length);
    expect(m.js.gzipBytes).toBeGreaterThan(0);
    expect(m.js.gzipBytes).toBeLessThan(m.js.bytes);
    expect(m.css.bytes).toBe(1200);
  });

  it('names the limit, the size and the largest file when over', () => {
    const m = measureInitialAssets(dir);
    expect(overBudget(m, { initialJsGzipBytes: 1e9, initialCssGzipBytes: 1e9 })).toEqual([]);
    const over = overBudget(m, { initialJsGzipBytes: 100, initialCssGzipBytes: 1e9 });
    expect(over).toHaveLength(1);
    expect(over[0]).toMatch(/^initial JavaScript is [\d.]+ kB gzipped, over the budget of 0\.1 kB/);
    expect(over[0]).toMatch(/: \/assets\/index-a\.js [\d.]+ kB, \/assets\/shared-b\.js/);
  });

  it('the committed budget is well formed', () => {
    const budget = readBudget();
    expect(budget.initialJsGzipBytes).toBeGreaterThan(50_000);
    expect(budget.initialCssGzipBytes).toBeGreaterThan(10_000);
  });
});

import { describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_DIRECTORY } from '../../apps/api/src/config.js';
import { measureInitialAssets, overBudget, readBudget } from './bundle-size.js';

/**
 * The console's initial JavaScript and CSS (what index.html loads before the first paint) stay
 * within apps/console/budget.json. Reads the build (npm test builds first): dist/apps/console.
 */
describe('the console bundle budget', () => {
  it('keeps the initial JavaScript and CSS within apps/console/budget.json', () => {
    if (!existsSync(join(CONSOLE_DIRECTORY, 'index.html'))) {
      throw new Error(`no built console in ${CONSOLE_DIRECTORY}: run node scripts/build.mjs`);
    }
    const measured = measureInitialAssets(CONSOLE_DIRECTORY);
    expect(overBudget(measured, readBudget())).toEqual([]);
    // Pages load lazily: the first paint must not carry them all.
    expect(
      measured.assets.some((a) => /\/(Clusters|ClusterPage|Administration)-/.test(a.path)),
    ).toBe(false);
  });
});

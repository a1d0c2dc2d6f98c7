import { AxeBuilder } from '@axe-core/playwright';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

/** Debian's Chromium (scripts/setup.mjs installs it); CHROMIUM_PATH names another one. */
export function chromiumPath(): string {
  const candidates = [
    process.env.CHROMIUM_PATH,
    // The binary itself starts faster than Debian's /usr/bin/chromium wrapper script.
    '/usr/lib/chromium/chromium',
    '/usr/bin/chromium',
  ].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no Chromium at ${candidates.join(', ')}: run npm run setup as root`);
  return found;
}

/** Headless, and quiet on a closed network: no updater, sync, QUIC or first-run traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    timeout: 30_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** Screenshots are kept as test artefacts (gitignored), one per page and state. */
export const ARTEFACTS = join(process.cwd(), 'test-artifacts', 'console');

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage: true });
}

/**
 * axe on the page as it is: the serious and critical violations, described for the failure.
 * `include` limits it to a part (a CSS selector), e.g. the content a page adds to a shell whose
 * masthead and navigation another test already checked: axe's time grows with the DOM.
 */
export async function seriousViolations(page: Page, include?: string): Promise<string[]> {
  const builder = new AxeBuilder({ page });
  if (include) builder.include(include);
  const result = await builder.analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`,
    );
}

/** Polls the locator's text until it matches, bounded; fails with what it last saw. */
export async function textMatches(
  locator: Locator,
  pattern: RegExp,
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      last = (await locator.textContent({ timeout: 2_000 })) ?? '';
    } catch (err) {
      last = `(no text: ${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
    }
    if (pattern.test(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `expected ${String(locator)} to match ${String(pattern)} within ${timeoutMs} ms; last text: ${JSON.stringify(last)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

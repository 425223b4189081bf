import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (test/run.sh installs it); CHROMIUM_PATH points elsewhere. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium for page tests. The flags keep it off the network (this machine has none, and
 * Chromium's background services would otherwise try to reach Google at every start). Playwright
 * gives each launch a fresh temporary profile. `--no-sandbox`: CI runs as root.
 */
export function openBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Every console error and uncaught page error, so that a test can assert there were none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

// Opens a local HTML file in headless Chromium (Debian's, through playwright-core) and
// prints, as one JSON line, what a person sees: for each CSS selector given, whether
// its first match is visible and its text; the page's console and script errors; the
// number of script elements; and writes a screenshot of the first screen.
//
//   node inspect-page.js PAGE.html SCREENSHOT.png SELECTOR...
//
// CHROMIUM overrides the browser's path (default /usr/bin/chromium).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

// Without the background-networking flags Chromium keeps dialling out, and a closed
// network refuses it; a fresh profile keeps one run from seeing another's state.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function main() {
  const [pagePath, screenshot, ...selectors] = process.argv.slice(2);
  if (!pagePath || !screenshot) {
    console.error('usage: node inspect-page.js PAGE.html SCREENSHOT.png SELECTOR...');
    process.exit(2);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'session-contracts-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
  });
  const consoleErrors = [];
  const pageErrors = [];
  const requests = [];
  try {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') {
        consoleErrors.push(`${message.type()}: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('request', (request) => requests.push(request.url()));
    // A planted script that ran would set this; escaping must keep it unset.
    await page.addInitScript(() => {
      window.__planted = [];
    });
    const url = 'file://' + path.resolve(pagePath);
    await page.goto(url, { waitUntil: 'load' });
    const seen = {};
    for (const selector of selectors) {
      const locator = page.locator(selector).first();
      const count = await page.locator(selector).count();
      seen[selector] = {
        count,
        visible: count > 0 ? await locator.isVisible() : false,
        text: count > 0 ? await locator.innerText() : '',
      };
    }
    const facts = await page.evaluate(() => ({
      scripts: document.querySelectorAll('script').length,
      planted: window.__planted.length,
      title: document.title,
      bodyText: document.body.innerText,
    }));
    await page.screenshot({ path: screenshot });
    const otherRequests = requests.filter((address) => address !== url);
    console.log(JSON.stringify({ seen, consoleErrors, pageErrors, otherRequests, ...facts }));
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

// Loads Strata's live dashboard in headless Chromium and checks that its
// charts have data. Started by the Go test TestDashboardBrowser
// (cmd/strata), which runs a real server, loads it with strata bench
// reporting to the dashboard, and sets:
//   STRATA_URL         the server's base URL
//   STRATA_SCREENSHOT  where to save a screenshot of the page
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const base = process.env.STRATA_URL;
const shot = process.env.STRATA_SCREENSHOT;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
let context, profile;

before(async () => {
  assert.ok(base, "STRATA_URL must be set (run through go test -run TestDashboardBrowser)");
  profile = mkdtempSync(join(tmpdir(), "strata-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath, headless: true, viewport: { width: 1280, height: 1400 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test("dashboard: the charts refresh and plot the load", async () => {
  const page = await context.newPage();
  const logs = [];
  page.on("console", m => logs.push(`console.${m.type()}: ${m.text()}`));
  page.on("pageerror", e => logs.push(`pageerror: ${e.message}`));
  try {
    await page.goto(`${base}/?refresh=700`);
    // Three refreshes: the page keeps polling the history by itself.
    await page.waitForFunction(() => window.strataDashboard && window.strataDashboard.updates >= 3,
      null, { timeout: 30000, polling: 200 });
    const d = await page.evaluate(() => window.strataDashboard);
    assert.equal(d.error, null, `dashboard error: ${d.error}\n${logs.join("\n")}`);
    for (const id of ["rps", "hits", "flash", "admission", "wear", "lifetime", "misses"]) {
      assert.ok(d.charts[id], `no chart ${id}`);
    }
    // The load the test sent before loading the page: requests by tier,
    // a hit ratio, and the bench run's reported requests.
    assert.ok(d.charts.rps.points >= 1 && d.charts.rps.max > 0, `requests chart empty: ${JSON.stringify(d.charts.rps)}`);
    assert.ok(d.charts.hits.points >= 1, `hit ratio chart empty: ${JSON.stringify(d.charts.hits)}`);
    assert.ok(d.charts.misses.points >= 1 && d.charts.misses.max > 0, `bench chart empty: ${JSON.stringify(d.charts.misses)}`);
    assert.ok(d.charts.flash.points >= 1, `flash chart empty: ${JSON.stringify(d.charts.flash)}`);
    const lines = await page.locator("#chart-rps svg polyline, #chart-rps svg circle").count();
    assert.ok(lines >= 1, "nothing drawn in the requests chart");
    if (shot) {
      await page.screenshot({ path: shot, fullPage: true });
      console.log(`screenshot: ${shot}`);
    }
    console.log(`charts: ${JSON.stringify(d.charts)}`);
  } finally {
    await page.close();
  }
});

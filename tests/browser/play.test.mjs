// Plays Strata's streams in headless Chromium with the dash.js and hls.js
// builds Strata serves (the same versions as this package's), through its
// watch page. Started by the Go test TestVideoBrowser (cmd/strata), which
// runs a real strata server and sets:
//   STRATA_URL     the server's base URL
//   STRATA_VIDEO   the title to play
//   STRATA_PAGE_URL optional: another origin serving the watch page; the
//                   "-xorigin" cases load the page from it and play the
//                   media from STRATA_URL through CORS
//   STRATA_CASES   optional comma-separated subset, e.g. "dash-L1,hls-L4x8"
//   STRATA_WANT_TIERS optional comma-separated tiers, e.g. "ram,ssd": every
//                   manifest, playlist and segment answer of STRATA_URL
//                   must carry an X-Strata-Tier among them (a second
//                   viewing through an edge node: nothing from upstream)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const base = process.env.STRATA_URL;
const pageBase = process.env.STRATA_PAGE_URL;
const video = process.env.STRATA_VIDEO;
const wantTiers = process.env.STRATA_WANT_TIERS ? process.env.STRATA_WANT_TIERS.split(",") : null;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

// A case plays one level with one player at one rate.
const cases = [
  { player: "dash", level: "L1", rate: 1 },
  { player: "hls", level: "L1", rate: 1 },
  // The watch page opened with no title named: it picks the first title
  // that plays (synthetic load-test titles are listed but never chosen).
  { player: "dash", level: "L1", rate: 1, defaultTitle: true },
  { player: "dash", level: "L3", rate: 1 },
  { player: "hls", level: "L3", rate: 1 },
  { player: "dash", level: "L4", rate: 8 },
  { player: "hls", level: "L4", rate: 8 },
  ...(pageBase ? [
    { player: "dash", level: "L1", rate: 1, xorigin: true },
    { player: "hls", level: "L1", rate: 1, xorigin: true },
  ] : []),
].map(c => ({ ...c, name: `${c.player}-${c.level}${c.rate !== 1 ? "x" + c.rate : ""}${c.xorigin ? "-xorigin" : ""}${c.defaultTitle ? "-default-title" : ""}` }))
  .filter(c => !process.env.STRATA_CASES || process.env.STRATA_CASES.split(",").includes(c.name));

let context, profile;

before(async () => {
  assert.ok(base && video, "STRATA_URL and STRATA_VIDEO must be set (run through go test -run TestVideoBrowser)");
  profile = mkdtempSync(join(tmpdir(), "strata-chromium-"));
  // A fresh profile directory per run (Playwright passes it as --user-data-dir).
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--autoplay-policy=no-user-gesture-required"],
  });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

for (const c of cases) {
  test(`${c.name}: playback starts and currentTime advances`, async () => {
    const page = await context.newPage();
    const logs = [];
    page.on("console", m => logs.push(`console.${m.type()}: ${m.text()}`));
    page.on("pageerror", e => logs.push(`pageerror: ${e.message}`));
    // Media answers read by the page from Strata's origin, for the
    // cross-origin cases.
    const mediaOrigin = new URL(base).origin;
    const crossed = [];
    // X-Strata-Tier of each media object answered by Strata's origin.
    const tiers = {}, misplaced = [];
    page.on("response", r => {
      if (new URL(r.url()).origin !== mediaOrigin || !r.ok()) return;
      crossed.push(r.url());
      if (!/\.(mpd|m3u8|m4s|mp4)$/.test(new URL(r.url()).pathname)) return;
      const tier = r.headers()["x-strata-tier"] || "none";
      tiers[tier] = (tiers[tier] || 0) + 1;
      if (wantTiers && !wantTiers.includes(tier)) misplaced.push(`${r.url()}: ${tier}`);
    });
    try {
      const q = new URLSearchParams({ v: video, player: c.player, level: c.level, rate: String(c.rate), autoplay: "1", muted: "1" });
      if (c.defaultTitle) q.delete("v");
      if (c.xorigin) {
        assert.notEqual(new URL(pageBase).origin, mediaOrigin, "the page must come from another origin");
        q.set("media", base);
      }
      await page.goto(`${c.xorigin ? pageBase : base}/watch?${q}`);
      // Wait for 1.5 s of media time past the first frame, or a fatal error.
      const target = c.rate > 1 ? 3 : 1.5;
      await page.waitForFunction(t => {
        const s = window.strata && window.strata.state();
        return s && (s.fatal || s.currentTime > t);
      }, target, { timeout: 45000, polling: 200 });
      const s = await page.evaluate(() => window.strata.state());
      assert.equal(s.fatal, null, `fatal error: ${s.fatal}\n${logs.join("\n")}`);
      assert.ok(s.currentTime > target, `currentTime ${s.currentTime}`);
      assert.ok(s.width > 0 && s.height > 0, `no picture: ${s.width}x${s.height}`);
      assert.equal(s.source.level, c.level);
      if (c.defaultTitle) assert.equal(s.source.title, video, "the watch page did not open on the title that plays");
      if (c.rate > 1) assert.equal(s.rate, c.rate, "playback rate");
      if (c.xorigin) {
        assert.ok(s.source.url.startsWith(base), `manifest ${s.source.url} is not Strata's`);
        assert.ok(crossed.some(u => /\.(mpd|m3u8)$/.test(u)) && crossed.some(u => /\.m4s$/.test(u)),
          `no manifest and segment read across origins: ${crossed.join(" ")}`);
      }
      // Still advancing: not stalled after the start.
      const t0 = s.currentTime;
      await page.waitForFunction(t => window.strata.state().currentTime > t + 0.3, t0, { timeout: 15000, polling: 100 })
        .catch(() => {}); // at the end of a short title time stops; checked below
      const s2 = await page.evaluate(() => window.strata.state());
      assert.equal(s2.fatal, null, `fatal error: ${s2.fatal}`);
      console.log(`${c.name}: played to ${s2.currentTime.toFixed(2)} s at x${s2.rate}, ${s2.width}x${s2.height}; ` +
        `media answers by X-Strata-Tier ${JSON.stringify(tiers)}`);
      if (wantTiers) {
        assert.ok(Object.keys(tiers).length > 0, "no media answer carried X-Strata-Tier");
        assert.deepEqual(misplaced, [], `answers not from ${wantTiers.join(" or ")}`);
      }
    } finally {
      await page.close();
    }
  });
}

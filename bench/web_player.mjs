// The web player's speed in headless Chromium on this machine (one thread: the page's), with the
// pool scene (every term of the look: light, gain, caustics, sky, glints) at 360×240 and at
// 640×480: each frame's simulation, drawing and putImageData onto the element's canvas, as
// playing does, over three loops (300 frames) after one loop of warming up; the element
// playing in real time for three seconds with Chromium held to one core (taskset), counting the
// frames drawn and skipped; and the time from the element attached to its first frame on
// screen (module, wasm, scene and picture fetched from a local server, the wasm compiled).
//
//   npm ci --prefix web && node bench/web_player.mjs
//
// Prints a Markdown table (docs/benchmarks.md keeps the figures).
import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { chromiumPath, gaps, open, root } from "../web/test/browser.mjs";

const pool = await readFile(join(root, "scenes/pool.toml"), "utf8");
const dir = await mkdtemp(join(tmpdir(), "ripple-web-bench-"));
// Chromium on one core: every process of it (the page's, the compositor's, the GPU's) on CPU 0.
const oneCore = join(dir, "chromium-one-core");
await writeFile(oneCore, `#!/bin/sh\nexec taskset -c 0 ${chromiumPath()} "$@"\n`);
await chmod(oneCore, 0o755);
const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["-c", "0", "true"]);
    return true;
  } catch {
    return false;
  }
})();

const rows = [];
for (const [width, height] of [
  [360, 240],
  [640, 480],
]) {
  const scene = join(dir, `pool-${width}x${height}.toml`);
  await writeFile(scene, pool.replace(/^width = \d+$/m, `width = ${width}`).replace(/^height = \d+$/m, `height = ${height}`));
  const { tab, close } = await open(scene);
  const times = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    const water = el.water;
    const context = el.canvas.getContext("2d");
    const frame = () => {
      const start = performance.now();
      water.advance();
      water.draw(context);
      return performance.now() - start;
    };
    for (let i = 0; i < water.frames; i++) frame();
    const out = [];
    for (let i = 0; i < 3 * water.frames; i++) out.push(frame());
    return out;
  });
  await close();
  // Playing, on one core: three runs, the worst kept.
  let playing = null;
  if (hasTaskset) {
    const before = process.env.CHROMIUM;
    process.env.CHROMIUM = oneCore;
    for (let run = 0; run < 3; run++) {
      const { tab: page, close: done } = await open(scene, { attributes: "" });
      const out = await page.evaluate(async () => {
        const el = document.querySelector("ripple-water");
        await new Promise((ok) => setTimeout(ok, 1000));
        const drawn = [];
        el.addEventListener("frame", (e) => drawn.push(e.detail));
        await new Promise((ok) => setTimeout(ok, 3000));
        return { drawn, frames: el.water.frames };
      });
      await done();
      const result = { drawn: out.drawn.length, skipped: gaps(out.drawn, out.frames) };
      if (playing === null || result.skipped > playing.skipped || result.drawn < playing.drawn) playing = result;
    }
    if (before === undefined) delete process.env.CHROMIUM;
    else process.env.CHROMIUM = before;
  }
  // The first frame: a fresh page for each of five runs.
  const first = [];
  for (let i = 0; i < 5; i++) {
    const { tab: page, close: done } = await open(scene, { attributes: "" });
    first.push(await page.evaluate(() => window.firstFrame - window.attached));
    await done();
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const p95 = times[Math.floor(times.length * 0.95)];
  first.sort((a, b) => a - b);
  rows.push({ size: `${width}×${height}`, mean, p95, fps: 1000 / p95, playing, first: first[2] });
}
console.log("| pool scene | mean frame | 95th percentile | frames a second at the 95th | playing 3 s at 25 fps on one core (worst of 3) | first frame (median of 5) |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) {
  const playing = r.playing === null ? "(no taskset)" : `${r.playing.drawn} drawn, ${r.playing.skipped} skipped`;
  console.log(`| ${r.size} | ${r.mean.toFixed(2)} ms | ${r.p95.toFixed(2)} ms | ${r.fps.toFixed(0)} | ${playing} | ${r.first.toFixed(0)} ms |`);
}

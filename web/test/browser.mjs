// The web player in a real browser: the system's Chromium, headless, driven by playwright-core
// (web/package.json's one development dependency: `npm ci --prefix web`). The test suite
// (tests/it/web.rs) and the benchmark (bench/web_player.mjs) run it:
//
//   node web/test/browser.mjs hashes SCENE.toml      every frame's hash, one a line
//   node web/test/browser.mjs pointer SCENE.toml     a click and a drag: JSON of what changed, and the lines
//   node web/test/browser.mjs replay SCENE.toml      after `pointer`: the hashes of the next loop
//   node web/test/browser.mjs reduced SCENE.toml     with prefers-reduced-motion: JSON
//   node web/test/browser.mjs first SCENE.toml       time to the first frame on screen: JSON
//   node web/test/browser.mjs site DIR               a folder `ripple-render web` wrote: JSON
//   node web/test/browser.mjs screenshot SCENE.toml  the README's picture, docs/web.png
//
// Files are served over HTTP from the repository's root (and a scene's folder, for scenes
// elsewhere), as a static host would; CHROMIUM names the browser (default: chromium on PATH).
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, "..", "..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".toml": "text/plain; charset=utf-8",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
};

/** Serves `/repo/…` from the repository and `/scene/…` from `sceneDir`, and `/page.html`. */
export async function serve(sceneDir, page) {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, "http://x").pathname);
    const [base, rest] = path.startsWith("/repo/")
      ? [root, path.slice(6)]
      : path.startsWith("/scene/")
        ? [sceneDir, path.slice(7)]
        : [null, null];
    if (path === "/page.html") {
      response.writeHead(200, { "content-type": TYPES[".html"] });
      return response.end(page);
    }
    const file = base === null ? null : resolve(base, rest);
    if (file === null || !(file + sep).startsWith(base + sep) || !(await stat(file).catch(() => null))?.isFile()) {
      response.writeHead(404);
      return response.end();
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    response.end(await readFile(file));
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

/** The system's Chromium. */
export function chromiumPath() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    } catch {}
  }
  throw new Error("no chromium on PATH (set CHROMIUM)");
}

/** A page playing `scenePath` in a `<ripple-water>` element, and a way to close it all. */
export async function open(scenePath, { reducedMotion = "no-preference", attributes = "paused", viewport, width = "auto" } = {}) {
  const { chromium } = await import("playwright-core");
  const scene = resolve(scenePath);
  const page = `<!doctype html><meta charset="utf-8"><title>ripple-water test</title><link rel="icon" href="data:,">
<style>body { margin: 0 } ripple-water canvas { image-rendering: pixelated; width: ${width}; height: auto }</style>
<ripple-water scene="/scene/${encodeURIComponent(scene.split(sep).pop())}" wasm="/repo/web/ripple_water.wasm" ${attributes}></ripple-water>
<script type="module">
  window.attached = performance.now();
  document.querySelector("ripple-water").addEventListener("frame", () => (window.firstFrame ??= performance.now()));
  await import("/repo/web/ripple-water.js");
</script>`;
  const { server, url } = await serve(dirname(scene), page);
  // A browser that dies starting (it happens, rarely, on a busy machine) is started again.
  let browser;
  for (let attempt = 1; ; attempt++) {
    try {
      browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--disable-gpu"] });
      break;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
  const context = await browser.newContext({ reducedMotion, viewport: viewport ?? { width: 1000, height: 800 } });
  const tab = await context.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e.message));
  tab.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await tab.goto(`${url}/page.html`);
  await tab.waitForFunction(() => {
    const el = document.querySelector("ripple-water");
    return el?.water || el?.dataset.error;
  });
  const error = await tab.evaluate(() => document.querySelector("ripple-water").dataset.error);
  if (error) throw new Error(error);
  return {
    tab,
    errors,
    close: async () => {
      await browser.close();
      server.close();
    },
  };
}

/** Every frame's hash as the page's player draws it (its own frame buffer, not the canvas). */
async function hashes(scene) {
  const { tab, close } = await open(scene);
  const out = await tab.evaluate(() => {
    const water = document.querySelector("ripple-water").water;
    const lines = [];
    for (let i = 0; i < water.frames; i++) {
      water.seek(i);
      water.pixels();
      lines.push(water.hash());
    }
    return lines;
  });
  await close();
  return out.join("\n");
}

/** The canvas's pixels, read back (to see where they changed: never to check exactness). */
const canvasPixels = () => {
  const el = document.querySelector("ripple-water");
  const c = el.canvas;
  return Array.from(c.getContext("2d").getImageData(0, 0, c.width, c.height).data);
};

/** How far from `at` the pixels that differ between two RGBA readbacks lie: the count of
 * those within 12 pixels of it and beyond 60, and the nearest's distance. */
function spread(a, b, width, at) {
  let [near, far, nearest] = [0, 0, Infinity];
  for (let i = 0; i < a.length; i += 4) {
    if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) {
      const d = Math.hypot((i / 4) % width - at[0], Math.floor(i / 4 / width) - at[1]);
      near += d <= 12;
      far += d > 60;
      nearest = Math.min(nearest, d);
    }
  }
  return { near, far, nearest };
}

/** The bounding box of the pixels that differ between two RGBA readbacks. */
function changed(a, b, width) {
  let box = null;
  for (let i = 0; i < a.length; i += 4) {
    if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) {
      const x = (i / 4) % width, y = Math.floor(i / 4 / width);
      box = box === null ? [x, y, x, y] : [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)];
    }
  }
  return box;
}

/**
 * A person's click and drag, with the mouse, on the element scaled to twice the scene's size
 * by CSS: where the pixels change first, and the lines the page exports.
 */
async function pointer(scene) {
  const { tab, errors, close } = await open(scene, { width: "720px" });
  const size = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.seek(10);
    const box = el.canvas.getBoundingClientRect();
    return { width: el.canvas.width, height: el.canvas.height, left: box.left, top: box.top, scale: box.width / el.canvas.width };
  });
  // The frame after 10 without a click, then back to frame 10.
  const before = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.seek(11);
    return [el.frame, 0];
  });
  const plain = await tab.evaluate(canvasPixels);
  await tab.evaluate(() => document.querySelector("ripple-water").seek(10));
  // A click at scene pixel (120, 90): the paused element steps one frame to show it.
  const click = [120, 90];
  const at = (x, y) => [size.left + (x + 0.5) * size.scale, size.top + (y + 0.5) * size.scale];
  await tab.mouse.click(...at(...click));
  const clicked = await tab.evaluate(canvasPixels);
  const frameAfterClick = await tab.evaluate(() => document.querySelector("ripple-water").frame);
  const box = changed(plain, clicked, size.width);
  const around = spread(plain, clicked, size.width, click);
  // Then it plays, and a drag crosses the lower part, fast, while it plays.
  await tab.evaluate(() => document.querySelector("ripple-water").play());
  await tab.mouse.move(...at(40, 200));
  await tab.mouse.down();
  for (let i = 1; i <= 12; i++) {
    await tab.mouse.move(...at(40 + 22 * i, 200 - 2 * i), { steps: 2 });
    await tab.waitForTimeout(40);
  }
  await tab.mouse.up();
  await tab.waitForTimeout(200);
  const lines = await tab.evaluate(() => document.querySelector("ripple-water").export());
  const frames = await tab.evaluate(() => document.querySelector("ripple-water").water.frames);
  const replay = await tab.evaluate((frames) => {
    const el = document.querySelector("ripple-water");
    el.pause();
    const water = el.water;
    const out = [];
    for (let i = 0; i < frames; i++) {
      water.seek(i);
      water.pixels();
      out.push(water.hash());
    }
    return out;
  }, frames);
  await close();
  return { click, before, frameAfterClick, changed: box, around, lines, replay, errors };
}

/** With prefers-reduced-motion: what shows, and whether it moves. */
async function reduced(scene) {
  const { tab, errors, close } = await open(scene, { reducedMotion: "reduce", attributes: "" });
  const first = await tab.evaluate(canvasPixels);
  await tab.waitForTimeout(400);
  const later = await tab.evaluate(canvasPixels);
  const state = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.water.seek(0);
    return { showing: el.dataset.showing, frame: el.frame };
  });
  // Frame 0 as the player draws it, against the canvas.
  const frame0 = await tab.evaluate(() => Array.from(document.querySelector("ripple-water").water.pixels()));
  await close();
  return { ...state, still: changed(first, later, 1 << 30) === null, isFrame0: changed(first, frame0, 1 << 30) === null, errors };
}

/** From the element attached to its first frame on the canvas, in milliseconds (pictures and module served locally). */
async function first(scene) {
  const { tab, close } = await open(scene, { attributes: "" });
  // Again, now that the browser has the files cached as a returning visitor would not: a fresh
  // element on the same page, timed from its creation.
  const times = await tab.evaluate(async () => {
    const out = [];
    for (let i = 0; i < 5; i++) {
      const el = document.createElement("ripple-water");
      el.setAttribute("wasm", "/repo/web/ripple_water.wasm");
      el.setAttribute("scene", document.querySelector("ripple-water").getAttribute("scene") + `?${i}`);
      const start = performance.now();
      const shown = new Promise((done) => el.addEventListener("frame", () => done(performance.now()), { once: true }));
      document.body.append(el);
      out.push((await shown) - start);
      el.remove();
    }
    return out;
  });
  const cold = await tab.evaluate(() => window.firstFrame - window.attached);
  await close();
  return { cold, again: times };
}

/**
 * A folder `ripple-render web` wrote, served over HTTP, and opened from file://: what shows,
 * and over HTTP the first frame's hash and the frames' count.
 */
async function site(dir) {
  const { chromium } = await import("playwright-core");
  const folder = resolve(dir);
  const { server, url } = await serve(folder, "");
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  const tab = await browser.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e.message));
  const look = async () => {
    await tab.waitForFunction(() => {
      const el = document.querySelector("ripple-water");
      return el?.water || el?.dataset.showing === "fallback";
    });
    return tab.evaluate(async () => {
      const el = document.querySelector("ripple-water");
      const image = el.querySelector("img[data-fallback]");
      if (image) await image.decode().catch(() => {});
      const water = el.water;
      return {
        showing: el.dataset.showing,
        fallbackWidth: image?.naturalWidth ?? 0,
        frames: water?.frames ?? 0,
        first: water ? (water.seek(0), water.pixels(), water.hash()) : null,
      };
    });
  };
  await tab.goto(`${url}/scene/index.html`);
  const http = await look();
  const httpErrors = errors.splice(0);
  await tab.goto(`file://${folder}/index.html`);
  const file = await look();
  await browser.close();
  server.close();
  return { http, httpErrors, file };
}

/**
 * The README's picture: the scene at twice its size after a click and a drag across it, one
 * frame at a time (so the picture is the same on every run), saved as PNG at `out`.
 */
async function screenshot(scene, out = "docs/web.png") {
  const { tab, close } = await open(scene, { width: "720px" });
  const box = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.seek(44);
    const b = el.canvas.getBoundingClientRect();
    return [b.left, b.top, b.width / el.canvas.width];
  });
  const at = (x, y) => [box[0] + (x + 0.5) * box[2], box[1] + (y + 0.5) * box[2]];
  const step = () => tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.water.advance();
    el.water.draw(el.canvas.getContext("2d"));
  });
  await tab.mouse.click(...at(250, 80));
  for (let i = 0; i < 6; i++) await step();
  await tab.mouse.move(...at(60, 150));
  await tab.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await tab.mouse.move(...at(60 + 18 * i, 150 + 3 * i));
    await step();
  }
  await tab.mouse.up();
  for (let i = 0; i < 4; i++) await step();
  await tab.locator("ripple-water canvas").screenshot({ path: resolve(root, out) });
  await close();
  return `wrote ${out}`;
}

const commands = { hashes, pointer, reduced, first, site, screenshot };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, scene] = process.argv.slice(2);
  if (!(command in commands) || scene === undefined) {
    console.error(`usage: node web/test/browser.mjs ${Object.keys(commands).join("|")} SCENE.toml`);
    process.exit(2);
  }
  try {
    const out = await commands[command](scene);
    console.log(typeof out === "string" ? out : JSON.stringify(out));
  } catch (e) {
    console.error(e.stack ?? String(e));
    process.exit(1);
  }
}

// The web player in a real browser: the system's Chromium, headless, driven by playwright-core
// (web/package.json's one development dependency: `npm ci --prefix web`). The test suite
// (tests/it/web.rs) and the benchmark (bench/web_player.mjs) run it:
//
//   node web/test/browser.mjs hashes SCENE.toml      every frame's hash, one a line
//   node web/test/browser.mjs pointer SCENE.toml     a click and a drag: JSON of what changed, and the lines
//   node web/test/browser.mjs early SCENE.toml       a click and a drag before the player is ready: JSON
//   node web/test/browser.mjs clock SCENE.toml       the frames drawn on a clock of the test's own: JSON
//   node web/test/browser.mjs storm SCENE.toml       10,000 pointer events, resizes, no size: JSON
//   node web/test/browser.mjs first SCENE.toml       time to the first frame on screen: JSON
//   node web/test/browser.mjs site DIR               a folder `ripple-render web` wrote: JSON
//   node web/test/browser.mjs site-hashes DIR        every frame's hash of such a folder over HTTP
//   node web/test/browser.mjs reduced DIR            such a folder with prefers-reduced-motion: JSON
//   node web/test/browser.mjs playing SCENE.toml     the frames the playing element drew in 3 s: JSON
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

/**
 * Serves `/repo/…` from the repository and `/scene/…` from `sceneDir`, and `/page.html`; each
 * request's path is added to `seen`, and the files named in `delays` answer that many
 * milliseconds late.
 */
export async function serve(sceneDir, page, { seen = [], delays = {} } = {}) {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, "http://x").pathname);
    seen.push(path);
    const late = Object.entries(delays).find(([name]) => path.endsWith(name));
    if (late) await new Promise((done) => setTimeout(done, late[1]));
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

/** A headless Chromium, started again if it dies starting (it happens, rarely, on a busy machine). */
async function launch() {
  const { chromium } = await import("playwright-core");
  for (let attempt = 1; ; attempt++) {
    try {
      return await chromium.launch({
        executablePath: chromiumPath(),
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--enable-precise-memory-info", "--js-flags=--expose-gc"],
      });
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** A page playing `scenePath` in a `<ripple-water>` element, and a way to close it all. */
export async function open(
  scenePath,
  { reducedMotion = "no-preference", attributes = "paused", viewport, width = "auto", delays = {}, wait = true, before = "" } = {},
) {
  const scene = resolve(scenePath);
  const page = `<!doctype html><meta charset="utf-8"><title>ripple-water test</title><link rel="icon" href="data:,">
<style>body { margin: 0 } ripple-water canvas { image-rendering: pixelated; width: ${width}; height: auto }</style>
<script>${before}</script>
<ripple-water scene="/scene/${encodeURIComponent(scene.split(sep).pop())}" wasm="/repo/web/ripple_water.wasm" ${attributes}></ripple-water>
<script type="module">
  window.attached = performance.now();
  document.querySelector("ripple-water").addEventListener("frame", () => (window.firstFrame ??= performance.now()));
  await import("/repo/web/ripple-water.js");
</script>`;
  const seen = [];
  const { server, url } = await serve(dirname(scene), page, { seen, delays });
  const browser = await launch();
  const context = await browser.newContext({ reducedMotion, viewport: viewport ?? { width: 1000, height: 800 } });
  const tab = await context.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e.message));
  tab.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await tab.goto(`${url}/page.html`);
  if (wait) await ready(tab);
  return {
    tab,
    errors,
    seen,
    close: async () => {
      await browser.close();
      server.close();
    },
  };
}

/** Waits for the element's player (or its error, thrown). */
async function ready(tab) {
  // Polled on a timer: a test may replace requestAnimationFrame (Playwright's default poll).
  const found = () => {
    const el = document.querySelector("ripple-water");
    return el?.water || el?.dataset.error;
  };
  await tab.waitForFunction(found, null, { polling: 50 });
  const error = await tab.evaluate(() => document.querySelector("ripple-water").dataset.error);
  if (error) throw new Error(error);
}

/** Every frame's hash as the page's player draws it (its own frame buffer, not the canvas). */
async function hashes(scene) {
  const { tab, close } = await open(scene);
  const out = await frameHashes(tab);
  await close();
  return out;
}

/** Every frame's hash as the player on `tab` draws it, paused, a line each. */
async function frameHashes(tab) {
  const lines = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.pause();
    const water = el.water;
    const lines = [];
    for (let i = 0; i < water.frames; i++) {
      water.seek(i);
      water.pixels();
      lines.push(water.hash());
    }
    return lines;
  });
  return lines.join("\n");
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

/**
 * A click and a drag at once, before the player is ready (its module answers a second late):
 * what the player holds once ready, where the first frame after changed, and the lines.
 */
async function early(scene) {
  // The element knows the scene's size (as `ripple-render web` writes it), so that the canvas
  // has its shape before the scene is read.
  const [w, h] = [360, 240];
  const attributes = `paused width="${w}" height="${h}"`;
  const { tab, errors, close } = await open(scene, { width: "720px", attributes, wait: false, delays: { "ripple_water.wasm": 1000 } });
  await tab.waitForSelector("ripple-water canvas");
  const box = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    const b = el.canvas.getBoundingClientRect();
    return { left: b.left, top: b.top, width: b.width, height: b.height, ready: el.water !== null };
  });
  // Where on the element a scene pixel lies, the canvas's box being the scene's 2× (720 px wide).
  const scale = box.width / w;
  const at = (x, y) => [box.left + (x + 0.5) * scale, box.top + (y + 0.5) * scale];
  await tab.mouse.click(...at(120, 90));
  await tab.mouse.move(...at(40, 200));
  await tab.mouse.down();
  for (let i = 1; i <= 6; i++) await tab.mouse.move(...at(40 + 30 * i, 200), { steps: 2 });
  await tab.mouse.up();
  const readyBefore = await tab.evaluate(() => document.querySelector("ripple-water").water !== null);
  await ready(tab);
  const out = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    return { frame: el.frame, added: el.water.added, lines: el.export(), hash: (el.water.pixels(), el.water.hash()) };
  });
  await close();
  return { readyAtFirst: box.ready, readyBefore, ...out, errors };
}

/**
 * The frames the playing element draws on a clock of the test's own (requestAnimationFrame at
 * 60 a second of made-up time, each callback at once): three seconds steady, then a stall of
 * 120 ms (three frames' time at 25 fps), then one of 600 ms. What is drawn depends on the
 * element's logic alone, not on the machine's speed.
 */
async function clock(scene) {
  const before = `
    let fake = 0, next = 1;
    const queue = new Map();
    window.requestAnimationFrame = (f) => (queue.set(next, f), next++);
    window.cancelAnimationFrame = (id) => queue.delete(id);
    window.runFor = (ms, stall = 0) => {
      fake += stall;
      const end = fake + ms;
      while (fake < end) {
        fake += 1000 / 60;
        const now = [...queue.values()];
        queue.clear();
        for (const f of now) f(fake);
      }
    };`;
  const { tab, errors, close } = await open(scene, { attributes: "", before });
  const out = await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    const drawn = [];
    el.addEventListener("frame", (e) => drawn.push(e.detail));
    window.runFor(200);
    drawn.length = 0;
    // Each list starts with the last frame drawn before it, so a frame skipped at a stall shows.
    const last = () => drawn[drawn.length - 1];
    window.runFor(3000);
    const steady = drawn.splice(0);
    drawn.push(steady[steady.length - 1]);
    window.runFor(1000, 120);
    const short = drawn.splice(0);
    drawn.push(last() ?? short[short.length - 1]);
    window.runFor(1000, 600);
    const long = drawn.splice(0);
    return { fps: el.water.fps, frames: el.water.frames, steady, short, long };
  });
  await close();
  return { ...out, gaps: [gaps(out.steady, out.frames), gaps(out.short, out.frames), gaps(out.long, out.frames)], errors };
}

/** Frame numbers in a row that do not follow each other, looping around `frames`. */
export function gaps(drawn, frames) {
  let count = 0;
  for (let i = 1; i < drawn.length; i++) if (drawn[i] !== (drawn[i - 1] + 1) % frames) count++;
  return count;
}

/**
 * The playing element's frames over three seconds of real time, after a second of warming up:
 * how many were drawn and how many were skipped (bench/web_player.mjs runs it on one core).
 */
async function playing(scene) {
  const { tab, errors, close } = await open(scene, { attributes: "" });
  const out = await tab.evaluate(async () => {
    const el = document.querySelector("ripple-water");
    await new Promise((done) => setTimeout(done, 1000));
    const drawn = [];
    let callbacks = 0;
    let counting = true;
    const count = () => {
      callbacks++;
      if (counting) requestAnimationFrame(count);
    };
    requestAnimationFrame(count);
    el.addEventListener("frame", (e) => drawn.push(e.detail));
    await new Promise((done) => setTimeout(done, 3000));
    counting = false;
    return { fps: el.water.fps, frames: el.water.frames, drawn, callbacks };
  });
  await close();
  return { ...out, skipped: gaps(out.drawn, out.frames), errors };
}

/**
 * 10,000 pointer events (a hovering pointer, drags and clicks), a storm of resizes, then the
 * element at no size and the events again: console errors, and the module's and the page's
 * memory after each round (flat: what grows is bounded by what the pointer may add).
 */
async function storm(scene) {
  const { tab, errors, close } = await open(scene, { attributes: "" });
  const round = (label) =>
    tab.evaluate(async (label) => {
      const el = document.querySelector("ripple-water");
      const canvas = el.canvas;
      const box = () => canvas.getBoundingClientRect();
      const fire = (type, x, y, buttons = 0) =>
        canvas.dispatchEvent(new PointerEvent(type, { clientX: x, clientY: y, buttons, button: 0, pointerId: 1, bubbles: true }));
      let events = 0;
      for (let i = 0; i < 10000; i++) {
        const b = box();
        const [x, y] = [b.left + ((i * 37) % 997) / 997 * b.width, b.top + ((i * 61) % 991) / 991 * b.height];
        if (i % 500 === 0) {
          fire("pointerdown", x, y, 1);
          fire("pointerup", x, y);
        } else if (i % 100 === 1) fire("pointerdown", x, y, 1);
        else if (i % 100 === 50) fire("pointerup", x, y);
        else fire("pointermove", x, y, i % 100 < 50 ? 1 : 0);
        events++;
        if (i % 1000 === 999) await new Promise((done) => requestAnimationFrame(done));
      }
      // Resizes, every frame for a while, and within one frame.
      for (let i = 0; i < 200; i++) {
        el.style.width = `${100 + ((i * 53) % 700)}px`;
        if (i % 10 === 0) await new Promise((done) => requestAnimationFrame(done));
      }
      el.style.width = el.dataset.width ?? "";
      await new Promise((done) => setTimeout(done, 200));
      globalThis.gc?.();
      return { label, events, added: el.water.added, heap: performance.memory.usedJSHeapSize, module: el.water.memoryBytes };
    }, label);
  const first = await round("first");
  const second = await round("second");
  // No size: the element collapsed to nothing, still played and pointed at.
  await tab.evaluate(() => {
    const el = document.querySelector("ripple-water");
    el.style.cssText = "display: block; width: 0; height: 0; overflow: hidden";
    el.dataset.width = "0";
  });
  const third = await round("at no size");
  const showing = await tab.evaluate(() => document.querySelector("ripple-water").dataset.showing);
  await close();
  return { rounds: [first, second, third], showing, errors };
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
  const folder = resolve(dir);
  const { server, url } = await serve(folder, "");
  const browser = await launch();
  const tab = await browser.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e.message));
  tab.on("console", (m) => m.type() === "error" && errors.push(m.text()));
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

/** Every frame's hash of a folder `ripple-render web` wrote, played over HTTP. */
async function siteHashes(dir) {
  const { server, url } = await serve(resolve(dir), "");
  const browser = await launch();
  const tab = await browser.newPage();
  await tab.goto(`${url}/scene/index.html`);
  await ready(tab);
  const out = await frameHashes(tab);
  await browser.close();
  server.close();
  return out;
}

/**
 * A folder `ripple-render web` wrote, opened with prefers-reduced-motion: what is fetched and
 * how many pictures show over two seconds, then, once the reader clicks to play, what is
 * fetched and whether it plays.
 */
async function reduced(dir) {
  const seen = [];
  const { server, url } = await serve(resolve(dir), "", { seen });
  const browser = await launch();
  const context = await browser.newContext({ reducedMotion: "reduce" });
  const tab = await context.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e.message));
  tab.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await tab.goto(`${url}/scene/index.html`);
  // Every 50 ms for two seconds: the canvas's picture, as a hash of its pixels.
  const pictures = await tab.evaluate(async () => {
    const el = document.querySelector("ripple-water");
    const seen = new Set();
    for (let i = 0; i < 40; i++) {
      const c = el.querySelector("canvas");
      const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let h = 2166136261;
      for (let j = 0; j < data.length; j += 7) h = Math.imul(h ^ data[j], 16777619);
      seen.add(`${c.width}x${c.height}:${h >>> 0}`);
      await new Promise((done) => setTimeout(done, 50));
    }
    return { count: seen.size, showing: el.dataset.showing, water: el.water !== null };
  });
  const fetchedStill = seen.splice(0);
  await tab.locator("ripple-water canvas").click();
  await ready(tab);
  const afterClick = await tab.evaluate(async () => {
    const el = document.querySelector("ripple-water");
    const first = el.frame;
    await new Promise((done) => setTimeout(done, 500));
    return { first, later: el.frame, showing: el.dataset.showing };
  });
  await browser.close();
  server.close();
  return { pictures, fetchedStill, fetchedAfter: seen, afterClick, errors };
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

const commands = { hashes, pointer, early, clock, playing, storm, reduced, first, site, "site-hashes": siteHashes, screenshot };

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

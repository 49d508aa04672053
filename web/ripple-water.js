// ripple-water: a ripple-render scene played live on a web page, the very frames the CLI renders.
//
//   <script type="module" src="ripple-water.js"></script>
//   <ripple-water scene="pond.toml"></ripple-water>
//
// The element fetches the scene, its pictures and ripple_water.wasm (beside this module unless
// `wasm="…"` says otherwise), and plays the scene on a canvas of the scene's size, in real
// time, looping; a click drops a stone, a drag draws a swipe. The browser decodes the pictures
// (the module carries no image decoder) and hands their pixels to the player. Without the
// element, `Water.load()` gives the same player to script: step, draw, hash, add. No bundler or
// framework needed; the module imports nothing.

const MESSAGE_DECODER = new TextDecoder();
const ENCODER = new TextEncoder();

/** The compiled module, fetched once per URL. */
const modules = new Map();

async function compile(url) {
  const key = String(url);
  if (!modules.has(key)) {
    const fetched = (async () => {
      const response = await fetch(key);
      if (!response.ok) throw new Error(`ripple-water: ${key}: ${response.status} ${response.statusText}`);
      // Compiled while it downloads where the host names it application/wasm.
      if (typeof WebAssembly.compileStreaming === "function" && response.headers.get("content-type") === "application/wasm") {
        return WebAssembly.compileStreaming(response);
      }
      return WebAssembly.compile(await response.arrayBuffer());
    })();
    modules.set(key, fetched);
    fetched.catch(() => modules.delete(key));
  }
  return modules.get(key);
}

/** A URL for `path` as a scene names a picture (`/` between folders), beside `base`. */
function beside(base, path) {
  return new URL(path.split("/").map(encodeURIComponent).join("/"), base);
}

/** Whether `picture` is decoded already: `{ width, height, data }`, as an ImageData is. */
function isDecoded(picture) {
  return (
    picture !== null &&
    typeof picture === "object" &&
    !(picture instanceof ArrayBuffer) &&
    !ArrayBuffer.isView(picture) &&
    !(globalThis.Blob && picture instanceof Blob) &&
    "width" in picture &&
    "height" in picture &&
    "data" in picture
  );
}

/**
 * A picture's bytes decoded by the browser: upright, unpremultiplied 8-bit RGBA, untouched by
 * colour management. An 8-bit PNG without transparency decodes to exactly the CLI's pixels
 * (`ripple-render web` writes its pictures so); other pictures to the browser's own decoding.
 */
async function decodePicture(bytes, path) {
  if (typeof createImageBitmap !== "function") {
    throw new Error(`ripple-water: ${path}: no image decoder here: give the picture decoded, as { width, height, data }`);
  }
  const blob = globalThis.Blob && bytes instanceof Blob ? bytes : new Blob([bytes]);
  let bitmap;
  try {
    bitmap = await createImageBitmap(blob, { premultiplyAlpha: "none", colorSpaceConversion: "none" });
  } catch (error) {
    throw new Error(`ripple-water: ${path}: the browser cannot decode it as a picture (${error.message})`);
  }
  const { width, height } = bitmap;
  const canvas =
    typeof OffscreenCanvas === "function"
      ? new OffscreenCanvas(width, height)
      : Object.assign(document.createElement("canvas"), { width, height });
  const context = canvas.getContext("2d", { willReadFrequently: true });
  context.drawImage(bitmap, 0, 0);
  bitmap.close?.();
  return { width, height, data: context.getImageData(0, 0, width, height).data };
}

/** A scene played live: see README's "On a web page" and web/README.md. */
export class Water {
  /**
   * Loads a scene: from `scene` (a URL: its pictures are fetched beside it) or from `text`
   * (named `name`) and `files`: the pictures by the path the scene gives them, as a Map, an
   * object, or a function of the path (which may return a promise); each the file's bytes, or
   * already decoded as `{ width, height, data }` (8-bit RGBA, as an ImageData). `wasm` (a URL,
   * or a WebAssembly.Module) is the player's module, by default ripple_water.wasm beside this
   * one. `decode(bytes, path)` decodes a picture's bytes (by default the browser does).
   */
  static async load({ scene, text, files, name, wasm, decode = decodePicture } = {}) {
    const base = scene === undefined ? null : new URL(scene, globalThis.location?.href);
    const module = wasm instanceof WebAssembly.Module ? wasm : compile(wasm ?? new URL("ripple_water.wasm", import.meta.url));
    if (base !== null) {
      const response = await fetch(base);
      if (!response.ok) throw new Error(`ripple-water: ${base}: ${response.status} ${response.statusText}`);
      text = await response.text();
      name ??= decodeURIComponent(base.pathname.split("/").pop() || "scene.toml");
    }
    const instance = await WebAssembly.instantiate(await module, {});
    const water = new Water(instance.exports);
    const needed = water.#begin(name ?? "scene.toml", text ?? "");
    const given =
      typeof files === "function" ? files : files instanceof Map ? (p) => files.get(p) : (p) => files?.[p];
    const pictures = await Promise.all(
      needed.map(async (path) => {
        let picture = await given(path);
        if (picture === undefined && base !== null) {
          const url = beside(base, path);
          const response = await fetch(url);
          if (!response.ok) throw new Error(`ripple-water: ${url}: ${response.status} ${response.statusText}`);
          picture = await response.blob();
        }
        if (picture === undefined) throw new Error(`ripple-water: the scene reads ${path}, which was not given`);
        return isDecoded(picture) ? picture : decode(picture, path);
      }),
    );
    needed.forEach((path, i) => water.#give(path, pictures[i]));
    water.#open();
    return water;
  }

  #x;
  #session = 0;
  #image = null;

  constructor(exports) {
    this.#x = exports;
  }

  #message() {
    const x = this.#x;
    return MESSAGE_DECODER.decode(new Uint8Array(x.memory.buffer, x.rw_message(), x.rw_message_len()));
  }

  #bytes(data) {
    const bytes = data instanceof Uint8Array ? data : typeof data === "string" ? ENCODER.encode(data) : new Uint8Array(data);
    const at = this.#x.rw_alloc(bytes.length);
    new Uint8Array(this.#x.memory.buffer, at, bytes.length).set(bytes);
    return [at, bytes.length];
  }

  #begin(name, text) {
    const [n, nl] = this.#bytes(name);
    const [t, tl] = this.#bytes(text);
    this.#session = this.#x.rw_new(n, nl, t, tl);
    const message = this.#message();
    if (this.#session === 0) throw new Error(`ripple-water: ${message}`);
    return message === "" ? [] : message.split("\n");
  }

  #give(path, { width, height, data }) {
    const [p, pl] = this.#bytes(path);
    const [b, bl] = this.#bytes(data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    if (this.#x.rw_give_pixels(this.#session, p, pl, width, height, b, bl) !== 1) throw new Error(`ripple-water: ${this.#message()}`);
  }

  #open() {
    if (this.#x.rw_open(this.#session) !== 1) throw new Error(`ripple-water: ${this.#message()}`);
  }

  #get(what) {
    return this.#x.rw_get(this.#session, what) >>> 0;
  }

  /** Canvas width in pixels. */
  get width() { return this.#get(0); }
  /** Canvas height in pixels. */
  get height() { return this.#get(1); }
  /** Frames a second. */
  get fps() { return this.#get(2); }
  /** Frames in the loop. */
  get frames() { return this.#get(3); }
  /** The frame simulated last, from 0. */
  get frame() { return this.#get(4); }
  /** Stones and pieces of swipe the pointer added. */
  get added() { return this.#get(5); }
  /** The module's memory, in bytes (it grows as a scene needs, and is given back by free()). */
  get memoryBytes() { return this.#x.memory.buffer.byteLength; }

  /** Simulates the next frame (the first after the last); returns its number. */
  advance() { return this.#x.rw_advance(this.#session) >>> 0; }

  /** Simulates up to frame `n` (from the start if it lies behind); returns the frame reached. */
  seek(n) { return this.#x.rw_seek(this.#session, n) >>> 0; }

  /** Draws the frame simulated last: its RGBA pixels (a view valid until the next call). */
  pixels() {
    const at = this.#x.rw_draw(this.#session);
    return new Uint8ClampedArray(this.#x.memory.buffer, at, this.width * this.height * 4);
  }

  /** Draws the frame simulated last into a canvas 2-D context, at (0, 0), 1:1. */
  draw(context) {
    const pixels = this.pixels();
    // An ImageData over the module's memory: the frame is not copied on its way to the canvas.
    // (Memory that grew leaves the old view empty: a new one is made.)
    const image = this.#image;
    if (image === null || image.data.buffer !== pixels.buffer || image.data.byteOffset !== pixels.byteOffset || image.width !== this.width) {
      this.#image = new ImageData(pixels, this.width, this.height);
    }
    context.putImageData(this.#image, 0, 0);
  }

  /** The last frame drawn's hash: 16 hex digits, the XXH3-64 of its RGB bytes, as `--hashes` writes it. */
  hash() {
    return BigInt.asUintN(64, this.#x.rw_hash(this.#session)).toString(16).padStart(16, "0");
  }

  /** Drops a stone at canvas pixel (x, y) on the next frame; false when no more may be added. */
  press(x, y) { return this.#x.rw_pointer(this.#session, 0, x | 0, y | 0) === 1; }
  /** Starts a swipe at (x, y). */
  dragStart(x, y) { this.#x.rw_pointer(this.#session, 1, x | 0, y | 0); }
  /** Moves the swipe to (x, y): the next frame draws the piece that got it there. */
  dragTo(x, y) { this.#x.rw_pointer(this.#session, 2, x | 0, y | 0); }
  /** Ends the swipe. */
  dragEnd() { this.#x.rw_pointer(this.#session, 3, 0, 0); }
  /** Forgets what the pointer added; plays again from the first frame. */
  clear() { this.#x.rw_pointer(this.#session, 4, 0, 0); }

  /** What the pointer added, as [[stone]] and [[swipe]] lines for the end of the scene. */
  export() {
    this.#x.rw_export(this.#session);
    return this.#message();
  }

  /** Frees the player's memory; it is not used again. */
  free() {
    if (this.#session !== 0) this.#x.rw_free_session(this.#session);
    this.#session = 0;
    this.#image = null;
  }
}

/** A click moves the pointer at most this many CSS pixels; a drag, more. */
const CLICK_SLOP = 4;

/** Pointer actions kept while the player loads: clicks are never dropped, moves are merged. */
const MOST_QUEUED = 4096;

/** Frames the clock may run ahead of what is drawn before frames are skipped, not drawn late. */
const MOST_BEHIND = 2;

/**
 * `<ripple-water scene="pond.toml">`: plays the scene, looping, in real time, on a canvas in
 * its light DOM whose backing store is the scene's size (style it to scale). Attributes:
 * `scene` (URL), `wasm` (URL of ripple_water.wasm), `poster` (an image shown until the first
 * frame; under reduced motion, shown alone until the reader asks to play, and nothing else is
 * fetched), `fallback` (an image, say an animated WebP of the loop, shown instead when the
 * player cannot play: no WebAssembly, or the scene could not be fetched, as from file://),
 * `width` and `height` (the scene's size, for the canvas before the scene is read), `alt`,
 * `paused`, `static` (no pointer). Methods: play(), pause(), seek(n), export(), clear();
 * properties: water, frame. Events: `ready`, `error` (detail: the Error), `frame` (detail:
 * the frame number, drawn).
 */
export class RippleWaterElement extends (globalThis.HTMLElement ?? class {}) {
  static observedAttributes = ["scene", "paused"];

  #canvas = null;
  #context = null;
  #water = null;
  #loading = null;
  #loaded = null;
  #visible = true;
  #clock = null;
  #raf = 0;
  #down = null;
  #dragging = false;
  #queue = [];
  #observer = null;
  #asked = false;
  #reduced = globalThis.matchMedia?.("(prefers-reduced-motion: reduce)");

  connectedCallback() {
    if (this.#canvas === null) {
      this.#canvas = this.querySelector("canvas") ?? document.createElement("canvas");
      const [w, h] = [Number(this.getAttribute("width")), Number(this.getAttribute("height"))];
      if (w > 0 && h > 0) [this.#canvas.width, this.#canvas.height] = [w, h];
      this.#canvas.style.touchAction = "none";
      this.#canvas.style.maxWidth = "100%";
      this.#canvas.style.display = "block";
      if (!this.#canvas.isConnected) this.append(this.#canvas);
      this.#context = this.#canvas.getContext("2d");
      this.#pointer();
      this.#showPoster();
    }
    this.#observer = new IntersectionObserver((entries) => {
      this.#visible = entries.some((e) => e.isIntersecting && e.boundingClientRect.width > 0 && e.boundingClientRect.height > 0);
      this.#schedule();
    });
    this.#observer.observe(this);
    document.addEventListener("visibilitychange", this.#onVisibility);
    this.#reduced?.addEventListener?.("change", this.#onVisibility);
    if (this.#waitsToBeAsked()) {
      // The poster alone, and a way to ask for the rest: a click, or Enter on the element.
      this.dataset.showing = "poster";
      this.#canvas.title = "Play";
      if (!this.hasAttribute("tabindex")) this.tabIndex = 0;
      if (!this.hasAttribute("aria-label")) this.setAttribute("aria-label", `${this.getAttribute("alt") ?? "Water"}: play`);
    } else {
      this.#load();
    }
  }

  disconnectedCallback() {
    this.#observer?.disconnect();
    document.removeEventListener("visibilitychange", this.#onVisibility);
    this.#reduced?.removeEventListener?.("change", this.#onVisibility);
    cancelAnimationFrame(this.#raf);
    this.#raf = 0;
  }

  attributeChangedCallback(name, before, after) {
    if (before === after || this.#canvas === null) return;
    if (name === "scene") this.#load();
    if (name === "paused") this.#schedule();
  }

  /** The player, once the scene is loaded (null before). */
  get water() { return this.#water; }
  /** A promise of the player. */
  get ready() { return this.#loading ?? Promise.reject(new Error("ripple-water: not loading (reduced motion: call play())")); }
  /** The frame on the canvas. */
  get frame() { return this.#water?.frame ?? 0; }
  /** The canvas played on. */
  get canvas() { return this.#canvas; }

  /** Plays (and under reduced motion, asks to: the player is then fetched). */
  play() {
    this.#asked = true;
    this.removeAttribute("paused");
    if (this.#loading === null) this.#load();
    this.#schedule();
  }
  pause() { this.setAttribute("paused", ""); }

  /** Shows frame `n` (pausing is up to the caller). */
  seek(n) {
    if (this.#water === null) return;
    this.#water.seek(n);
    this.#show();
    this.#clock = null;
  }

  /** What the pointer added, as scene lines. */
  export() { return this.#water?.export() ?? ""; }

  /** Forgets what the pointer added. */
  clear() {
    this.#queue = [];
    if (this.#water === null) return;
    this.#water.clear();
    this.#show();
    this.#clock = null;
  }

  #onVisibility = () => this.#schedule();

  /** Under reduced motion with a poster, nothing is fetched until the reader asks to play. */
  #waitsToBeAsked() {
    return this.#reduced?.matches === true && this.getAttribute("poster") !== null && !this.#asked;
  }

  #showPoster() {
    const poster = this.getAttribute("poster");
    if (poster === null) return;
    const image = new Image();
    image.onload = () => {
      if (this.#water !== null) return;
      this.#canvas.width = image.naturalWidth;
      this.#canvas.height = image.naturalHeight;
      this.#context.drawImage(image, 0, 0);
      this.dataset.showing = "poster";
    };
    image.src = new URL(poster, document.baseURI).href;
  }

  #load() {
    const scene = this.getAttribute("scene");
    if (scene === null || this.#loaded === scene) return;
    this.#loaded = scene;
    const wasm = this.getAttribute("wasm") ?? undefined;
    const loading = Water.load({ scene: new URL(scene, document.baseURI).href, wasm: wasm && new URL(wasm, document.baseURI) });
    this.#loading = loading;
    loading.then(
      (water) => {
        if (this.#loading !== loading) return water.free();
        this.#water?.free();
        this.#water = water;
        this.#canvas.width = water.width;
        this.#canvas.height = water.height;
        this.#clock = null;
        const queued = this.#queue.splice(0);
        for (const [what, at] of queued) this.#apply(what, at);
        if (queued.length > 0 && !this.#shouldPlay()) water.advance();
        this.#show();
        this.dispatchEvent(new CustomEvent("ready"));
        this.#schedule();
      },
      (error) => {
        if (this.#loading !== loading) return;
        this.#queue = [];
        this.dataset.error = error.message;
        console.error(error);
        this.#fallBack();
        this.dispatchEvent(new CustomEvent("error", { detail: error }));
      },
    );
    // Kept for the `ready` property; its failure is handled above.
    loading.catch(() => {});
  }

  /** The `fallback` image (an animation of the loop) in the canvas's place, when the player cannot play. */
  #fallBack() {
    const fallback = this.getAttribute("fallback");
    if (fallback === null || this.querySelector("img[data-fallback]")) return;
    const image = document.createElement("img");
    image.src = new URL(fallback, document.baseURI).href;
    image.alt = this.getAttribute("alt") ?? "";
    image.dataset.fallback = "";
    this.#canvas.replaceWith(image);
    this.dataset.showing = "fallback";
  }

  #show() {
    this.#water.draw(this.#context);
    this.dataset.showing = "frame";
    this.dispatchEvent(new CustomEvent("frame", { detail: this.#water.frame }));
  }

  /** Whether frames should be playing now. */
  #shouldPlay() {
    return (
      this.#water !== null &&
      this.isConnected &&
      !this.hasAttribute("paused") &&
      this.#visible &&
      document.visibilityState !== "hidden" &&
      (this.#reduced?.matches !== true || this.#asked)
    );
  }

  #schedule() {
    const play = this.#shouldPlay();
    if (play && this.#raf === 0) {
      this.#clock = null;
      this.#raf = requestAnimationFrame(this.#tick);
    } else if (!play && this.#raf !== 0) {
      cancelAnimationFrame(this.#raf);
      this.#raf = 0;
    }
    if (this.#reduced?.matches && !this.#asked && this.#water !== null && this.dataset.showing !== "frame") {
      // Reduced motion without a poster image: the first frame, still.
      this.#show();
    }
  }

  // Real time: each callback draws the next frame once it is due, so every frame is drawn;
  // one more than a few frames late is simulated but not drawn, and past a quarter second
  // behind (a stall) the clock starts again. The clock is never slowed.
  #tick = (now) => {
    this.#raf = 0;
    if (!this.#shouldPlay()) return;
    const water = this.#water;
    const period = 1000 / water.fps;
    if (this.#clock === null) this.#clock = { start: now, shown: 0 };
    const due = Math.floor((now - this.#clock.start) / period);
    const behind = due - this.#clock.shown;
    if (behind * period > 250) {
      this.#clock = { start: now - period, shown: 0 };
    } else if (behind > 0) {
      // More than a few frames late (a machine too slow for the scene): the ones between are
      // simulated, not drawn; else the next frame is drawn, and one late catches up next time.
      const skipped = behind > MOST_BEHIND ? behind - 1 : 0;
      for (let i = 0; i < skipped; i++) water.advance();
      water.advance();
      this.#clock.shown += skipped + 1;
      this.#show();
    }
    this.#raf = requestAnimationFrame(this.#tick);
  };

  /** Where a pointer event lies on the canvas, as fractions of its box (null off a box of no size). */
  #at(event) {
    const box = this.#canvas.getBoundingClientRect();
    if (!(box.width > 0 && box.height > 0)) return null;
    const clamp = (v) => Math.min(Math.max(v, 0), 0.999999);
    return [clamp((event.clientX - box.left) / box.width), clamp((event.clientY - box.top) / box.height)];
  }

  /** A pointer action: applied now, or queued until the player is ready. */
  #act(what, at) {
    if (at === null) return;
    if (this.#water !== null) {
      this.#apply(what, at);
      return;
    }
    const last = this.#queue[this.#queue.length - 1];
    if (what === "move" && last?.[0] === "move") {
      last[1] = at;
      return;
    }
    if (this.#queue.length >= MOST_QUEUED) {
      // Moves give way first; a click or a drag's ends are kept.
      const move = this.#queue.findIndex(([w]) => w === "move");
      if (move < 0) return;
      this.#queue.splice(move, 1);
    }
    this.#queue.push([what, at]);
  }

  #apply(what, [fx, fy]) {
    const water = this.#water;
    const [x, y] = [Math.floor(fx * water.width), Math.floor(fy * water.height)];
    if (what === "press") water.press(x, y);
    else if (what === "start") water.dragStart(x, y);
    else if (what === "move") water.dragTo(x, y);
    else water.dragEnd();
  }

  #pointer() {
    const canvas = this.#canvas;
    canvas.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      if (this.#waitsToBeAsked()) {
        // Under reduced motion the poster shows until the reader asks: a click asks.
        this.play();
        return;
      }
      if (this.hasAttribute("static")) return;
      const at = this.#at(event);
      if (at === null) return;
      canvas.setPointerCapture?.(event.pointerId);
      this.#down = { x: event.clientX, y: event.clientY, at };
      this.#dragging = false;
    });
    canvas.addEventListener("pointermove", (event) => {
      if (this.#down === null) return;
      if (!this.#dragging && Math.hypot(event.clientX - this.#down.x, event.clientY - this.#down.y) > CLICK_SLOP) {
        this.#dragging = true;
        this.#act("start", this.#down.at);
      }
      if (this.#dragging) this.#act("move", this.#at(event));
    });
    const up = (event) => {
      if (this.#down === null) return;
      if (this.#dragging) this.#act("end", [0, 0]);
      else if (event.type === "pointerup") this.#act("press", this.#down.at);
      this.#down = null;
      this.#dragging = false;
      // Paused, the water still answers: one frame on.
      if (!this.#shouldPlay() && this.#water !== null) {
        this.#water.advance();
        this.#show();
      }
    };
    canvas.addEventListener("pointerup", up);
    canvas.addEventListener("pointercancel", up);
    this.addEventListener("keydown", (event) => {
      if ((event.key === "Enter" || event.key === " ") && this.#waitsToBeAsked()) {
        event.preventDefault();
        this.play();
      }
    });
  }
}

if (globalThis.customElements !== undefined && !customElements.get("ripple-water")) {
  customElements.define("ripple-water", RippleWaterElement);
}

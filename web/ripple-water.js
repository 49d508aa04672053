// ripple-water: a ripple-render scene played live on a web page, the very frames the CLI renders.
//
//   <script type="module" src="ripple-water.js"></script>
//   <ripple-water scene="pond.toml"></ripple-water>
//
// The element fetches the scene, its pictures and ripple_water.wasm (beside this module unless
// `wasm="…"` says otherwise), and plays the scene on a canvas of the scene's size, in real
// time, looping; a click drops a stone, a drag draws a swipe. Without the element,
// `Water.load()` gives the same player to script: step, draw, hash, add. No bundler or
// framework needed; the module imports nothing.

const MESSAGE_DECODER = new TextDecoder();
const ENCODER = new TextEncoder();

/** The compiled module, fetched once per URL. */
const modules = new Map();

async function compile(url) {
  const key = String(url);
  if (!modules.has(key)) {
    modules.set(
      key,
      (async () => {
        const response = await fetch(key);
        if (!response.ok) throw new Error(`ripple-water: ${key}: ${response.status} ${response.statusText}`);
        const bytes = await response.arrayBuffer();
        return WebAssembly.compile(bytes);
      })(),
    );
  }
  return modules.get(key);
}

/** A scene played live: see README's "On a web page" and web/README.md. */
export class Water {
  /**
   * Loads a scene: from `scene` (a URL: its pictures are fetched beside it) or from `text`
   * (named `name`) and `files`: the pictures' bytes by the path the scene gives them, as a Map,
   * an object, or a function of the path (which may return a promise). `wasm` (a URL, or a
   * WebAssembly.Module) is the player's module, by default ripple_water.wasm beside this one.
   */
  static async load({ scene, text, files, name, wasm } = {}) {
    const module = wasm instanceof WebAssembly.Module ? wasm : await compile(wasm ?? new URL("ripple_water.wasm", import.meta.url));
    const instance = await WebAssembly.instantiate(module, {});
    const water = new Water(instance.exports);
    let base = null;
    if (scene !== undefined) {
      base = new URL(scene, globalThis.location?.href);
      const response = await fetch(base);
      if (!response.ok) throw new Error(`ripple-water: ${base}: ${response.status} ${response.statusText}`);
      text = await response.text();
      name ??= decodeURIComponent(base.pathname.split("/").pop() || "scene.toml");
    }
    const needed = water.#begin(name ?? "scene.toml", text ?? "");
    const given =
      typeof files === "function" ? files : files instanceof Map ? (p) => files.get(p) : (p) => files?.[p];
    for (const path of needed) {
      let bytes = await given(path);
      if (bytes === undefined && base !== null) {
        const url = new URL(path, base);
        const response = await fetch(url);
        if (!response.ok) throw new Error(`ripple-water: ${url}: ${response.status} ${response.statusText}`);
        bytes = await response.arrayBuffer();
      }
      if (bytes === undefined) throw new Error(`ripple-water: the scene reads ${path}, which was not given`);
      water.#give(path, bytes);
    }
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

  #give(path, data) {
    const [p, pl] = this.#bytes(path);
    const [b, bl] = this.#bytes(data);
    this.#x.rw_give(this.#session, p, pl, b, bl);
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
    if (this.#image === null || this.#image.width !== this.width) this.#image = new ImageData(this.width, this.height);
    this.#image.data.set(pixels);
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
  }
}

/** A click moves the pointer at most this many CSS pixels; a drag, more. */
const CLICK_SLOP = 4;

/**
 * `<ripple-water scene="pond.toml">`: plays the scene, looping, in real time, on a canvas in
 * its light DOM whose backing store is the scene's size (style it to scale). Attributes:
 * `scene` (URL), `wasm` (URL of ripple_water.wasm), `poster` (an image shown until the first
 * frame, and instead of playing when the reader prefers reduced motion), `fallback` (an image,
 * say an animated WebP of the loop, shown instead when the player cannot play: no WebAssembly,
 * or the scene could not be fetched, as from file://), `alt`, `paused`, `static` (no pointer). Methods: play(), pause(), seek(n), export(), clear(); properties: water, frame.
 * Events: `ready`, `error` (detail: the Error), `frame` (detail: the frame number, drawn).
 */
export class RippleWaterElement extends (globalThis.HTMLElement ?? class {}) {
  static observedAttributes = ["scene", "paused"];

  #canvas = null;
  #context = null;
  #water = null;
  #loading = null;
  #playing = false;
  #visible = true;
  #clock = null;
  #raf = 0;
  #down = null;
  #dragging = false;
  #observer = null;
  #reduced = globalThis.matchMedia?.("(prefers-reduced-motion: reduce)");

  connectedCallback() {
    if (this.#canvas === null) {
      this.#canvas = this.querySelector("canvas") ?? document.createElement("canvas");
      this.#canvas.style.touchAction = "none";
      this.#canvas.style.maxWidth = "100%";
      this.#canvas.style.display = "block";
      if (!this.#canvas.isConnected) this.append(this.#canvas);
      this.#context = this.#canvas.getContext("2d");
      this.#pointer();
    }
    this.#observer = new IntersectionObserver((entries) => {
      this.#visible = entries.some((e) => e.isIntersecting);
      this.#schedule();
    });
    this.#observer.observe(this);
    document.addEventListener("visibilitychange", this.#onVisibility);
    this.#reduced?.addEventListener?.("change", this.#onVisibility);
    this.#showPoster();
    this.#load();
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
  get ready() { return this.#loading ?? Promise.reject(new Error("ripple-water: not attached")); }
  /** The frame on the canvas. */
  get frame() { return this.#water?.frame ?? 0; }
  /** The canvas played on. */
  get canvas() { return this.#canvas; }

  play() { this.removeAttribute("paused"); }
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
    this.#water?.clear();
    this.#show();
    this.#clock = null;
  }

  #onVisibility = () => this.#schedule();

  #showPoster() {
    const poster = this.getAttribute("poster");
    if (poster === null) return;
    const image = new Image();
    image.onload = () => {
      if (this.#water !== null && !this.#reduced?.matches) return;
      this.#canvas.width = image.naturalWidth;
      this.#canvas.height = image.naturalHeight;
      this.#context.drawImage(image, 0, 0);
      this.dataset.showing = "poster";
    };
    image.src = new URL(poster, document.baseURI).href;
  }

  #load() {
    const scene = this.getAttribute("scene");
    if (scene === null) return;
    const wasm = this.getAttribute("wasm") ?? undefined;
    this.#loading = Water.load({ scene: new URL(scene, document.baseURI).href, wasm: wasm && new URL(wasm, document.baseURI) });
    this.#loading.then(
      (water) => {
        this.#water?.free();
        this.#water = water;
        this.#canvas.width = water.width;
        this.#canvas.height = water.height;
        this.#clock = null;
        if (this.#reduced?.matches && this.getAttribute("poster") !== null) {
          this.#showPoster();
        } else {
          this.#show();
        }
        this.dispatchEvent(new CustomEvent("ready"));
        this.#schedule();
      },
      (error) => {
        this.dataset.error = error.message;
        console.error(error);
        this.#fallBack();
        this.dispatchEvent(new CustomEvent("error", { detail: error }));
      },
    );
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
      !this.#reduced?.matches
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
    if (this.#reduced?.matches && this.#water !== null && this.getAttribute("poster") === null) {
      // Reduced motion without a poster image: the first frame, still.
      this.#water.seek(0);
      this.#show();
      this.dataset.showing = "poster";
    }
  }

  // Real time: the frames due since the clock started are simulated, the last of them drawn; a
  // frame that cannot be drawn in time is dropped, never the clock slowed (but past a quarter
  // second behind, as after a stall, the clock starts again).
  #tick = (now) => {
    this.#raf = 0;
    if (!this.#shouldPlay()) return;
    const water = this.#water;
    const period = 1000 / water.fps;
    if (this.#clock === null) this.#clock = { start: now, shown: 0 };
    const due = Math.floor((now - this.#clock.start) / period);
    if (due - this.#clock.shown > Math.max(2, 250 / period)) {
      this.#clock = { start: now - period, shown: 0 };
    } else if (due > this.#clock.shown) {
      for (let i = this.#clock.shown; i < due; i++) water.advance();
      this.#clock.shown = due;
      this.#show();
    }
    this.#raf = requestAnimationFrame(this.#tick);
  };

  /** Canvas pixel under a pointer event. */
  #at(event) {
    const box = this.#canvas.getBoundingClientRect();
    return [
      Math.floor(((event.clientX - box.left) * this.#canvas.width) / box.width),
      Math.floor(((event.clientY - box.top) * this.#canvas.height) / box.height),
    ];
  }

  #pointer() {
    const canvas = this.#canvas;
    canvas.addEventListener("pointerdown", (event) => {
      if (this.#water === null || this.hasAttribute("static") || event.button !== 0) return;
      canvas.setPointerCapture(event.pointerId);
      this.#down = { x: event.clientX, y: event.clientY, at: this.#at(event) };
      this.#dragging = false;
    });
    canvas.addEventListener("pointermove", (event) => {
      if (this.#down === null) return;
      if (!this.#dragging && Math.hypot(event.clientX - this.#down.x, event.clientY - this.#down.y) > CLICK_SLOP) {
        this.#dragging = true;
        this.#water.dragStart(...this.#down.at);
      }
      if (this.#dragging) this.#water.dragTo(...this.#at(event));
    });
    const up = (event) => {
      if (this.#down === null) return;
      if (this.#dragging) this.#water.dragEnd();
      else if (event.type === "pointerup") this.#water.press(...this.#down.at);
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
  }
}

if (globalThis.customElements !== undefined && !customElements.get("ripple-water")) {
  customElements.define("ripple-water", RippleWaterElement);
}

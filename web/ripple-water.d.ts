// Types for ripple-water.js: a ripple-render scene played live on a web page.

/** A picture decoded: upright, unpremultiplied 8-bit RGBA, row after row (as an ImageData). */
export interface Decoded {
  width: number;
  height: number;
  data: Uint8Array | Uint8ClampedArray;
}

/** A picture: its file's bytes (the browser decodes them), or decoded already. */
export type Picture = BufferSource | Blob | Decoded;

/** The pictures a scene reads, by the path the scene gives them. */
export type Files =
  | Map<string, Picture>
  | Record<string, Picture>
  | ((path: string) => Picture | undefined | Promise<Picture | undefined>);

export interface LoadOptions {
  /** The scene's URL: its text and its pictures (beside it) are fetched. */
  scene?: string | URL;
  /** The scene's text, when not fetched. */
  text?: string;
  /** The scene's name in messages (default: the URL's last part, or "scene.toml"). */
  name?: string;
  /** The pictures the scene reads, when not fetched. */
  files?: Files;
  /** ripple_water.wasm: a URL or a compiled module (default: beside ripple-water.js). */
  wasm?: string | URL | WebAssembly.Module;
  /**
   * Decodes a picture's bytes (default: the browser's createImageBitmap, unpremultiplied, no
   * colour management). An 8-bit PNG without transparency decodes to exactly the CLI's pixels.
   */
  decode?: (bytes: BufferSource | Blob, path: string) => Promise<Decoded>;
}

/** A scene played live: the CLI's frames, a frame at a time, looping. */
export class Water {
  /** Loads a scene and simulates its first frame; rejects with the scene's error (file:line:column). */
  static load(options: LoadOptions): Promise<Water>;
  /** Canvas width in pixels. */
  readonly width: number;
  /** Canvas height in pixels. */
  readonly height: number;
  /** Frames a second. */
  readonly fps: number;
  /** Frames in the loop. */
  readonly frames: number;
  /** The frame simulated last, from 0. */
  readonly frame: number;
  /** Stones and pieces of swipe the pointer added. */
  readonly added: number;
  /** The module's memory in bytes. */
  readonly memoryBytes: number;
  /** Simulates the next frame (the first after the last); returns its number. */
  advance(): number;
  /** Simulates up to frame `n` (from the start if it lies behind); returns the frame reached. */
  seek(n: number): number;
  /** Draws the frame simulated last: its RGBA pixels, a view valid until the next call. */
  pixels(): Uint8ClampedArray;
  /** Draws the frame simulated last into a 2-D context at (0, 0), 1:1. */
  draw(context: CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D): void;
  /** The last frame drawn's hash, 16 hex digits: what `ripple-render --hashes` writes for it. */
  hash(): string;
  /** Drops a stone at canvas pixel (x, y) on the next frame; false when no more may be added. */
  press(x: number, y: number): boolean;
  /** Starts a swipe at (x, y). */
  dragStart(x: number, y: number): void;
  /** Moves the swipe to (x, y); the next frame draws the piece that got it there. */
  dragTo(x: number, y: number): void;
  /** Ends the swipe. */
  dragEnd(): void;
  /** Forgets what the pointer added; plays again from the first frame. */
  clear(): void;
  /** What the pointer added, as [[stone]] and [[swipe]] lines for the end of the scene. */
  export(): string;
  /** Frees the player's memory. */
  free(): void;
}

/**
 * `<ripple-water scene="pond.toml" width="360" height="240" poster="poster.png" wasm="ripple_water.wasm" paused static>`:
 * under prefers-reduced-motion with a poster, only the poster is fetched until play() (or a
 * click, or Enter) asks for the rest; a click or drag before the player is ready is kept.
 */
export class RippleWaterElement extends HTMLElement {
  /** The player, once the scene is loaded (null before). */
  readonly water: Water | null;
  /** A promise of the player. */
  readonly ready: Promise<Water>;
  /** The frame on the canvas. */
  readonly frame: number;
  /** The canvas played on (its backing store the scene's size). */
  readonly canvas: HTMLCanvasElement;
  /** Plays; under reduced motion, this is how the reader asks (the player is fetched then). */
  play(): void;
  pause(): void;
  /** Shows frame `n`. */
  seek(n: number): void;
  /** What the pointer added, as scene lines. */
  export(): string;
  /** Forgets what the pointer added. */
  clear(): void;
}

declare global {
  interface HTMLElementTagNameMap {
    "ripple-water": RippleWaterElement;
  }
}

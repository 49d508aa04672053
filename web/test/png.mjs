// A PNG decoder for the tests in Node (which has no image decoder, as a browser has): 8-bit,
// not interlaced, grey, RGB, palette, grey with alpha or RGBA, to unpremultiplied RGBA as a
// browser's ImageData holds it. The pictures a scene reads in the tests are such PNGs (the
// bundled ones, and those `ripple-render web` writes).
import { inflateSync } from "node:zlib";

export function decodePng(bytes, path = "picture") {
  const data = Buffer.from(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength);
  if (data.readUInt32BE(0) !== 0x89504e47) throw new Error(`${path}: not a PNG`);
  let at = 8;
  let header = null;
  let palette = null;
  let transparency = null;
  const compressed = [];
  while (at < data.length) {
    const length = data.readUInt32BE(at);
    const kind = data.toString("latin1", at + 4, at + 8);
    const body = data.subarray(at + 8, at + 8 + length);
    if (kind === "IHDR") {
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), depth: body[8], colour: body[9], interlace: body[12] };
    } else if (kind === "PLTE") palette = body;
    else if (kind === "tRNS") transparency = body;
    else if (kind === "IDAT") compressed.push(body);
    else if (kind === "IEND") break;
    at += 12 + length;
  }
  const { width, height, depth, colour, interlace } = header;
  if (depth !== 8 || interlace !== 0) throw new Error(`${path}: only 8-bit PNGs without interlacing are read here`);
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour];
  const raw = inflateSync(Buffer.concat(compressed));
  const stride = width * channels;
  const rows = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = rows.subarray(y * stride, (y + 1) * stride);
    const above = y > 0 ? rows.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels] : 0;
      const b = above[i];
      const c = i >= channels ? above[i - channels] : 0;
      let predicted = 0;
      if (filter === 1) predicted = a;
      else if (filter === 2) predicted = b;
      else if (filter === 3) predicted = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[i] = (line[i] + predicted) & 255;
    }
  }
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const s = rows.subarray(i * channels, (i + 1) * channels);
    let pixel;
    if (colour === 0) pixel = [s[0], s[0], s[0], 255];
    else if (colour === 2) pixel = [s[0], s[1], s[2], 255];
    else if (colour === 3) pixel = [palette[3 * s[0]], palette[3 * s[0] + 1], palette[3 * s[0] + 2], transparency?.[s[0]] ?? 255];
    else if (colour === 4) pixel = [s[0], s[0], s[0], s[1]];
    else pixel = [s[0], s[1], s[2], s[3]];
    rgba.set(pixel, i * 4);
  }
  return { width, height, data: rgba };
}

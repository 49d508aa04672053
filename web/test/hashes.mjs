// Prints the hash of every frame of a scene as the web player draws it, one a line, as
// `ripple-render SCENE --hashes FILE` writes them (the test suite compares the two):
//
//   node web/test/hashes.mjs SCENE.toml [WASM]
//
// The scene's pictures are read beside it and handed over decoded (by test/png.mjs: Node has no
// image decoder), as a page hands over what its browser decoded.
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { Water } from "../ripple-water.js";
import { decodePng } from "./png.mjs";

const [scene, wasmPath] = process.argv.slice(2);
if (scene === undefined) {
  console.error("usage: node web/test/hashes.mjs SCENE.toml [WASM]");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const wasm = await WebAssembly.compile(await readFile(wasmPath ?? join(here, "..", "ripple_water.wasm")));
const text = await readFile(scene, "utf8");

const water = await Water.load({
  text,
  name: basename(scene),
  wasm,
  files: async (path) => decodePng(await readFile(join(dirname(scene), path)), path),
}).catch((error) => {
  console.error(error.message);
  process.exit(1);
});
const lines = [];
for (let i = 0; i < water.frames; i++) {
  if (i > 0) water.advance();
  water.pixels();
  lines.push(water.hash());
}
console.log(lines.join("\n"));

// Bundles the viewer into ../src/buildbench/web/static (committed, shipped in the wheel).
// `npm ci && npm run build` (or `make web` at the repo root) rebuilds it from the lockfile.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

// BB_WEB_OUT builds elsewhere (the tests compare such a build with the committed one).
const out = process.env.BB_WEB_OUT || new URL("../src/buildbench/web/static/", import.meta.url).pathname;
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ["src/main.js"],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  outfile: `${out}/app.js`,
  legalComments: "eof",
  logLevel: "warning",
});
copyFileSync("src/index.html", `${out}/index.html`);
copyFileSync("src/style.css", `${out}/style.css`);
console.log(`viewer bundle written to ${out}`);

#!/usr/bin/env node
// Records each app's cases.json on workerd. Wrangler (which needs a newer
// Node than the recorder's) is stood in for by esbuild with Wrangler's
// options for workerd: ES module output, the workerd/worker/browser
// conditions, node:* and cloudflare:* left to the runtime, and, with
// nodejs_compat, bare built-in names ("events") resolved to "node:events"
// and require() of a built-in turned into an import.
// The bundle and the app's wrangler.jsonc and cases.json go to a scratch
// fixture that the conformance recorder replays; its cases.json is copied back.
//
//   ESBUILD=/path/to/node_modules/esbuild RECORDER=/work/rec/record.mjs \
//     node record.mjs [--check] [APP…]
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const esbuild = createRequire(import.meta.url)(process.env.ESBUILD ?? "esbuild");
const recorder = process.env.RECORDER ?? "/work/rec/record.mjs";
const args = process.argv.slice(2);
const check = args.includes("--check");
let apps = args.filter((a) => !a.startsWith("--"));
if (apps.length === 0) {
  apps = readdirSync(here).filter((d) => existsSync(path.join(here, d, "cases.json")));
}
const parseJsonc = (t) => JSON.parse(t.replace(/^\s*\/\/.*$/gm, "").replace(/,(\s*[}\]])/g, "$1"));
const builtins = new Set(builtinModules.filter((m) => !m.startsWith("_")));

for (const app of apps) {
  const dir = path.join(here, app);
  const cfg = parseJsonc(readFileSync(path.join(dir, "wrangler.jsonc"), "utf8"));
  const node = (cfg.compatibility_flags ?? []).some((f) => f.startsWith("nodejs_compat"));
  const out = mkdtempSync(path.join(os.tmpdir(), `app-${app}-`));
  await esbuild.build({
    absWorkingDir: dir,
    entryPoints: [path.join(dir, cfg.main)],
    outfile: path.join(out, "bundle.mjs"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    loader: { ".txt": "text", ".html": "text", ".sql": "text" },
    define: { "process.env.NODE_ENV": '"production"' },
    external: ["cloudflare:*"],
    plugins: [{
      name: "node",
      setup(b) {
        b.onResolve({ filter: /^(node:)?[a-z_]+(\/[a-z_]+)?$/ }, (a) => {
          const bare = a.path.replace(/^node:/, "");
          if (!a.path.startsWith("node:") && !(node && builtins.has(bare))) return;
          // As Wrangler does, a require() of a built-in becomes an import
          // (an ES module bundle has no require).
          if (a.kind === "require-call") return { path: "node:" + bare, namespace: "node-require" };
          return { path: "node:" + bare, external: true };
        });
        b.onLoad({ filter: /.*/, namespace: "node-require" }, (a) => ({
          contents: `import lib from ${JSON.stringify(a.path)}; module.exports = lib;`, loader: "js",
        }));
      },
    }],
  });
  writeFileSync(path.join(out, "wrangler.jsonc"), JSON.stringify({ ...cfg, main: "bundle.mjs" }, null, 2));
  cpSync(path.join(dir, "cases.json"), path.join(out, "cases.json"));
  execFileSync(process.execPath, [recorder, ...args.filter((a) => a.startsWith("--")), out], { stdio: "inherit" });
  if (!check) cpSync(path.join(out, "cases.json"), path.join(dir, "cases.json"));
}

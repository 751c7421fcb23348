#!/usr/bin/env node
// Runs the same scheduled() scenarios against workerd (through Miniflare's
// /cdn-cgi/handler/scheduled) and against `celld dev` (the same route),
// and prints where they differ: the answer to each trigger (status and
// body), and what the handler saw of its controller and ctx.
//
//   MINIFLARE_DIR=/work/rec node internal/croncompat/compare.mjs [--json]
//
// Run from the repository root: celld is started with `go run ./cmd/celld`.
// Exit status 1 when a scenario differs.

import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import util from "node:util";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const root = process.env.MINIFLARE_DIR || "/work/rec";
const req = createRequire(path.join(root, "package.json"));
const { Miniflare } = await import(pathToFileURL(req.resolve("miniflare")).href);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function scenarios(base) {
  const out = {};
  for (const cron of ["", "* * * * *", "fixed", "throw", "reject", "wait", "async-throw"]) {
    const q = "?cron=" + encodeURIComponent(cron) + (cron === "fixed" ? "&time=1700000000123" : "");
    const t0 = Date.now();
    const r = await fetch(base + "/cdn-cgi/handler/scheduled" + q);
    out[cron || "(none)"] = { status: r.status, body: await r.text(), waitedFor: cron === "wait" ? Date.now() - t0 >= 100 : undefined,
      saw: JSON.parse((await (await fetch(base + "/seen?cron=" + encodeURIComponent(cron))).text()) || "null") };
  }
  const none = await fetch(base + "/cdn-cgi/handler/scheduled?time=1");
  out.noCronParam = [none.status, await none.text()];
  return out;
}

async function withMiniflare(f) {
  const mf = new Miniflare({
    modules: true, scriptPath: path.join(HERE, "project/index.js"), modulesRoot: path.join(HERE, "project"),
    compatibilityDate: "2026-04-01", unsafeTriggerHandlers: true, kvNamespaces: ["SEEN"], host: "127.0.0.1", port: 0,
  });
  try {
    const url = await mf.ready;
    return await f(url.origin);
  } finally {
    await mf.dispose();
  }
}

async function withCelld(f) {
  const dir = mkdtempSync(path.join(tmpdir(), "croncompat-"));
  cpSync(path.join(HERE, "project"), dir, { recursive: true });
  const port = 20000 + Math.floor(Math.random() * 20000);
  const p = spawn("go", ["run", "./cmd/celld", "dev", dir, "--listen", "127.0.0.1:" + port], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  p.stderr.on("data", (d) => { stderr += d; });
  const base = "http://127.0.0.1:" + port;
  try {
    const end = Date.now() + 120000;
    for (;;) {
      try {
        if ((await fetch(base + "/__celld/health")).ok && (await fetch(base + "/nothing")).status === 404) break;
      } catch {}
      if (Date.now() > end || p.exitCode !== null) throw new Error("celld dev did not start:\n" + stderr);
      await sleep(250);
    }
    return await f(base);
  } finally {
    p.kill("SIGTERM");
    await new Promise((r) => p.on("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

const wd = await withMiniflare(scenarios);
const cd = await withCelld(scenarios);
let differ = 0;
const walk = (a, b, at) => {
  if (util.isDeepStrictEqual(a, b)) return;
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b) && (!Array.isArray(a) || a.length === b.length)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], at + "." + k);
    return;
  }
  differ++;
  console.log(`${at}\n  workerd: ${JSON.stringify(a)}\n  celld:   ${JSON.stringify(b)}`);
};
if (process.argv.includes("--json")) console.log(JSON.stringify({ workerd: wd, celld: cd }, null, 1));
walk(wd, cd, "");
console.log(differ === 0 ? "no differences" : `${differ} difference(s)`);
process.exit(differ === 0 ? 0 : 1);

#!/usr/bin/env node
// Runs the same WebSocket scenarios against workerd (through Miniflare)
// and against celld (`celld dev`), and prints where they differ.
//
//   MINIFLARE_DIR=/work/rec node internal/wscompat/compare.mjs [--json]
//
// MINIFLARE_DIR is a folder whose node_modules holds miniflare and ws.
// celld is run with `go run ./cmd/celld` from the repository root (the
// current directory). Exit status 1 when a scenario differs.

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
const WebSocket = req("ws");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- a client that logs what it sees
function open(url) {
  const c = new WebSocket(url);
  const log = [];
  let waiters = [];
  const note = (e) => {
    log.push(e);
    for (const w of waiters) w();
  };
  c.on("message", (data, isBinary) => note(isBinary ? "bin:" + [...data].join(",") : "text:" + (data.length > 64 ? `(${data.length} bytes)` : String(data))));
  c.on("close", (code, reason) => note(`close:${code}:${reason}`));
  c.on("error", (e) => note("error"));
  c.on("unexpected-response", (_, res) => {
    note("http:" + res.statusCode);
    res.resume();
  });
  const wait = async (n, ms = 3000) => {
    const end = Date.now() + ms;
    while (log.length < n && Date.now() < end) await new Promise((r) => { waiters.push(r); setTimeout(r, 50); });
    waiters = [];
  };
  const opened = new Promise((r) => { c.on("open", r); c.on("close", r); c.on("error", r); c.on("unexpected-response", r); });
  return { c, log, wait, opened };
}

async function scenarios(base) {
  const ws = base.replace("http:", "ws:");
  const out = {};
  out.probe = await (await fetch(base + "/probe")).json();
  const plain = await fetch(base + "/echo");
  out.plainRequest = [plain.status, await plain.text()];
  {
    const a = open(ws + "/accepted");
    await a.opened;
    await a.wait(1, 1000);
    out.returnAccepted = a.log;
  }
  {
    const e = open(ws + "/echo");
    await e.opened;
    e.c.send("a");
    await e.wait(1);
    e.c.send(Buffer.from([1, 2, 3]));
    await e.wait(2);
    e.c.send("x".repeat(1 << 20));
    await e.wait(3);
    e.c.close(3001, "bye");
    await e.wait(4);
    out.echo = e.log;
  }
  {
    const n = open(ws + "/noreply");
    await n.opened;
    n.c.close(1000, "hello?");
    await n.wait(1, 1500);
    out.noReply = n.log;
    n.c.terminate();
  }
  {
    const room = "r" + Date.now();
    const a = open(ws + `/room/${room}?who=a`);
    await a.opened;
    await a.wait(1);
    const b = open(ws + `/room/${room}?who=b`);
    await b.opened;
    await b.wait(1);
    a.c.send("hello");
    await a.wait(2);
    await b.wait(2);
    a.c.send("ping");
    await a.wait(3);
    a.c.send("whoami");
    await a.wait(4);
    a.c.send(Buffer.from([7, 8]));
    await a.wait(5);
    b.c.send("bye");
    await b.wait(3);
    await a.wait(6);
    a.c.close(1001, "away");
    await a.wait(7);
    await sleep(200);
    out.roomA = a.log;
    out.roomB = b.log;
  }
  return out;
}

// ---- the runtimes
async function withMiniflare(f) {
  const mf = new Miniflare({
    modules: true, scriptPath: path.join(HERE, "project/index.js"), modulesRoot: path.join(HERE, "project"),
    compatibilityDate: "2025-06-01", durableObjects: { ROOM: { className: "Room", useSQLite: true } },
    host: "127.0.0.1", port: 0,
  });
  try {
    const url = await mf.ready;
    return await f(url.origin);
  } finally {
    await mf.dispose();
  }
}

async function withCelld(f) {
  const dir = mkdtempSync(path.join(tmpdir(), "wscompat-"));
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
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a)) {
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

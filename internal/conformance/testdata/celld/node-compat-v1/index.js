// nodejs_compat before 2024-09-23 (no nodejs_compat_v2): node:* modules
// with the prefix, but no Buffer or process globals.
import { Buffer } from "node:buffer";
import process from "node:process";
import { EventEmitter } from "node:events";

export default {
  async fetch() {
    return Response.json({
      globals: ["Buffer", "process", "global", "setImmediate"].map((n) => typeof globalThis[n]),
      buffer: Buffer.from("v1").toString("hex"),
      env: process.env,
      emitter: typeof EventEmitter,
    });
  },
};

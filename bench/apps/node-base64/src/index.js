// bench/run.sh target node-base64: each request decodes 1 MiB of data
// from base64 with node:buffer, Buffer.from(string, "base64").
import { Buffer } from "node:buffer";

const raw = new Uint8Array(1 << 20);
for (let i = 0; i < raw.length; i++) raw[i] = (i * 31 + 7) & 255;
const B64 = Buffer.from(raw).toString("base64");

export default {
  fetch() {
    const b = Buffer.from(B64, "base64");
    return new Response(`${b.length}:${b[777]}`);
  },
};

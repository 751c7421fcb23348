// node:buffer as workerd provides it under nodejs_compat.
import { Buffer, constants, kMaxLength, isUtf8, isAscii, transcode } from "node:buffer";
import { Buffer as BareBuffer } from "buffer";

const err = (f) => {
  try { f(); return "no error"; } catch (e) { return { name: e.name, code: e.code, message: e.message }; }
};

const routes = {
  "/encodings": () => {
    const s = "héllo wörld € 𝄞";
    const out = {};
    for (const enc of ["utf8", "hex", "base64", "base64url", "latin1", "binary", "ascii", "ucs2", "utf16le"]) {
      const b = Buffer.from(s, enc);
      out[enc] = { len: b.length, hex: b.toString("hex"), back: b.toString(enc), byteLength: Buffer.byteLength(s, enc) };
    }
    out.base64Lenient = [
      Buffer.from("aGVsbG8", "base64").toString(), Buffer.from("aGVs bG8=\n", "base64").toString(),
      Buffer.from("aGVsbG8-_w", "base64").toString("hex"), Buffer.from("aGVsbG8=aGVsbG8=", "base64").toString(),
      Buffer.from("a", "base64").length, Buffer.from("!!!", "base64").length,
    ];
    out.hexLenient = [Buffer.from("abc", "hex").toString("hex"), Buffer.from("zz11", "hex").length, Buffer.from("11zz22", "hex").toString("hex")];
    out.invalidUtf8 = Buffer.from([0x61, 0xff, 0xc3, 0x28, 0xe2, 0x82]).toString();
    out.loneSurrogate = Buffer.from("a\ud800b").toString("hex");
    out.asciiHigh = Buffer.from([0xe9, 0x41]).toString("ascii");
    out.latin1Wide = Buffer.from("ā€", "latin1").toString("hex");
    out.utf16Odd = Buffer.from([0x61, 0x00, 0x62]).toString("utf16le");
    out.isEncoding = ["UTF-8", "Hex", "ucs-2", "nope", ""].map((e) => Buffer.isEncoding(e));
    out.unknown = err(() => Buffer.from("x", "nope"));
    out.unknownToString = err(() => Buffer.from("x").toString("nope"));
    out.isUtf8 = [isUtf8(Buffer.from("é")), isUtf8(Buffer.from([0xff]))];
    out.isAscii = [isAscii(Buffer.from("abc")), isAscii(Buffer.from("é"))];
    out.transcode = transcode(Buffer.from("héllo"), "utf8", "latin1").toString("hex");
    out.toStringRange = [Buffer.from("hello").toString("utf8", 1, 3), Buffer.from("hello").toString("utf8", -5, 100), Buffer.from("hello").toString(undefined, 3, 1)];
    return out;
  },
  "/construct": () => {
    const ab = new ArrayBuffer(8);
    const view = Buffer.from(ab, 2, 4);
    view[0] = 7;
    const u16 = new Uint16Array([1, 256, 65535]);
    return {
      globalIsSame: globalThis.Buffer === Buffer && BareBuffer === Buffer,
      fromArray: Buffer.from([1, 2, 300, -1, 1.7, "4"]).toString("hex"),
      fromArrayBufferShares: [new Uint8Array(ab)[2], view.length, view.buffer === ab],
      fromTypedCopies: Buffer.from(u16).toString("hex"),
      fromBufferCopies: (() => { const a = Buffer.from("ab"); const b = Buffer.from(a); a[0] = 0; return b.toString(); })(),
      fromJSONShape: Buffer.from({ type: "Buffer", data: [104, 105] }).toString(),
      fromStringObject: Buffer.from(new String("str")).toString(),
      alloc: [Buffer.alloc(4).toString("hex"), Buffer.alloc(5, "ab").toString(), Buffer.alloc(4, 0x101).toString("hex"), Buffer.alloc(6, "aGk=", "base64").toString(), Buffer.alloc(3, Buffer.from([1, 2])).toString("hex")],
      allocUnsafeLen: Buffer.allocUnsafe(10).length,
      isBuffer: [Buffer.isBuffer(Buffer.alloc(1)), Buffer.isBuffer(new Uint8Array(1)), Buffer.isBuffer("x")],
      instanceofU8: Buffer.alloc(1) instanceof Uint8Array,
      ctorName: Buffer.alloc(1).constructor.name,
      errors: {
        fromObject: err(() => Buffer.from({})),
        fromNumber: err(() => Buffer.from(5)),
        fromNull: err(() => Buffer.from(null)),
        allocString: err(() => Buffer.alloc("5")),
        arrayBufferOffset: err(() => Buffer.from(new ArrayBuffer(4), 5)),
        arrayBufferLength: err(() => Buffer.from(new ArrayBuffer(4), 1, 8)),
      },
      constants: [constants.MAX_LENGTH === kMaxLength, typeof kMaxLength],
      poolSize: Buffer.poolSize,
    };
  },
  "/methods": () => {
    const b = Buffer.from("hello world hello");
    const c = Buffer.alloc(10, ".");
    const copied = b.copy(c, 2, 6, 11);
    const sl = b.slice(0, 5);
    sl[0] = 0x48;
    const sub = b.subarray(-5);
    return {
      indexOf: [b.indexOf("o"), b.indexOf("o", 5), b.indexOf("hello", 1), b.indexOf(Buffer.from("wor")), b.indexOf(0x6c), b.indexOf("zz"), b.indexOf("o", -3), b.indexOf(""), b.indexOf("", 100)],
      lastIndexOf: [b.lastIndexOf("o"), b.lastIndexOf("hello"), b.lastIndexOf("o", 5), b.lastIndexOf(0x68), b.lastIndexOf("hello", -6)],
      includes: [b.includes("world"), b.includes("World"), b.includes("6c6c", 0, "hex")],
      copy: [copied, c.toString()],
      sliceShares: b.toString("utf8", 0, 5),
      subarray: sub.toString(),
      equals: [Buffer.from("a").equals(Buffer.from("a")), Buffer.from("a").equals(Buffer.from("b"))],
      compare: [Buffer.compare(Buffer.from("a"), Buffer.from("b")), Buffer.from("b").compare(Buffer.from("a")), Buffer.from("abc").compare(Buffer.from("xbcx"), 1, 3, 1, 3)],
      sort: [Buffer.from("c"), Buffer.from("a"), Buffer.from("b")].sort(Buffer.compare).map(String),
      concat: [Buffer.concat([Buffer.from("ab"), Buffer.from("cd")]).toString(), Buffer.concat([Buffer.from("ab"), Buffer.from("cd")], 3).toString(), Buffer.concat([Buffer.from("ab")], 4).toString("hex"), Buffer.concat([]).length],
      concatBad: err(() => Buffer.concat([Buffer.from("a"), "b"])),
      write: (() => { const w = Buffer.alloc(8); const n1 = w.write("héllo", 1); const n2 = w.write("ff", 7, "hex"); return [n1, n2, w.toString("hex"), Buffer.alloc(3).write("€€")]; })(),
      fill: [Buffer.alloc(5).fill("ab", 1).toString("hex"), Buffer.alloc(4).fill(0x1ff).toString("hex"), Buffer.alloc(4).fill("").toString("hex"), Buffer.alloc(5).fill("é").toString("hex")],
      fillBad: err(() => Buffer.alloc(4).fill("zz", "hex")),
      json: JSON.stringify({ b: Buffer.from("hi") }),
      toJSON: Buffer.from([1, 2]).toJSON(),
      swap: [Buffer.from([1, 2, 3, 4]).swap16().toString("hex"), Buffer.from([1, 2, 3, 4]).swap32().toString("hex"), err(() => Buffer.from([1, 2, 3]).swap16())],
      iter: [...Buffer.from("ab").entries()],
      reverse: Buffer.from("abc").reverse().toString(),
      mapIsBuffer: Buffer.isBuffer(Buffer.from("ab").map((x) => x + 1)),
      sliceIsBuffer: Buffer.isBuffer(Buffer.from("ab").slice(0)),
    };
  },
  "/numbers": () => {
    const b = Buffer.alloc(16);
    const w = [
      b.writeUInt8(255, 0), b.writeInt8(-2, 1), b.writeUInt16LE(0x1234, 2), b.writeInt16BE(-300, 4),
      b.writeUInt32BE(0xdeadbeef, 6), b.writeInt32LE(-123456, 10), b.writeUIntBE(0x123456, 13, 3),
    ];
    const f = Buffer.alloc(12);
    f.writeFloatLE(1.5, 0);
    f.writeDoubleBE(-0.1, 4);
    const big = Buffer.alloc(16);
    big.writeBigUInt64LE(2n ** 64n - 1n, 0);
    big.writeBigInt64BE(-5n, 8);
    return {
      writes: w, hex: b.toString("hex"),
      reads: [b.readUInt8(0), b.readInt8(1), b.readUInt16LE(2), b.readUint16BE(2), b.readInt16BE(4), b.readUInt32BE(6), b.readInt32LE(10), b.readUIntBE(13, 3), b.readIntLE(13, 3), b.readUIntLE(0, 6), b.readIntBE(0, 6)],
      floats: [f.readFloatLE(0), f.readDoubleBE(4), f.toString("hex")],
      bigints: [String(big.readBigUInt64LE(0)), String(big.readBigInt64BE(8)), String(big.readBigInt64LE(0)), big.toString("hex")],
      errors: {
        readOut: err(() => b.readUInt32LE(14)),
        readFrac: err(() => b.readUInt8(1.5)),
        readStr: err(() => b.readUInt8("1")),
        writeBig: err(() => b.writeUInt8(256, 0)),
        writeNeg: err(() => b.writeUInt16LE(-1, 0)),
        writeInt8: err(() => b.writeInt8(128, 0)),
        tooSmall: err(() => Buffer.alloc(2).readUInt32LE(0)),
        byteLength: err(() => b.readUIntLE(0, 7)),
        bigType: err(() => big.writeBigInt64LE(1, 0)),
      },
    };
  },
};

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    const route = routes[pathname];
    if (!route) return new Response("not found", { status: 404 });
    return Response.json(await route());
  },
};

import xml2js from "xml2js";
import { parse as csvParse } from "csv-parse";
import { parse as csvParseSync } from "csv-parse/sync";
import iconv from "iconv-lite";
import busboy from "busboy";
import { Readable } from "node:stream";
import { Buffer } from "node:buffer";

const caught = async (fn) => { try { return await fn(); } catch (e) { return { error: e.name, message: e.message }; } };

const routes = {
  "/xml": async () => {
    const xml = `<?xml version="1.0"?><catalog xmlns:x="urn:x"><book id="b1" x:lang="en"><title>The Hobbit</title><price cur="GBP">7.99</price></book><book id="b2"><title><![CDATA[A <Wizard>]]></title><tags><tag>sea</tag><tag>magic</tag></tags></book><!-- note --><empty/></catalog>`;
    const parsed = await xml2js.parseStringPromise(xml);
    const explicit = await xml2js.parseStringPromise(xml, { explicitArray: false, mergeAttrs: true, xmlns: false });
    const built = new xml2js.Builder({ rootName: "r", headless: true, renderOpts: { pretty: true, indent: "  ", newline: "\n" } }).buildObject({ a: { $: { k: "v&w" }, _: "text <x>" }, list: { i: [1, 2] } });
    const bad = await caught(() => xml2js.parseStringPromise("<a><b></a>"));
    return { parsed, explicit, built, bad };
  },
  "/csv": async () => {
    const text = 'id;name;note\n1;"Ada";"says ""hi"""\n2;Grace;\n3;"Multi\nline";x\n';
    const sync = csvParseSync(text, { delimiter: ";", columns: true, skip_empty_lines: true, cast: true });
    const rows = [];
    await new Promise((resolve, reject) => {
      Readable.from([text.slice(0, 17), text.slice(17, 40), text.slice(40)]).pipe(csvParse({ delimiter: ";", from_line: 2 }))
        .on("data", (r) => rows.push(r)).on("end", resolve).on("error", reject);
    });
    const bad = await caught(() => csvParseSync('a,b\n1,"2\n', {}));
    return { sync, rows, bad: { ...bad, code: undefined } };
  },
  "/iconv": () => {
    const s = "Grüße, café — 日本";
    return {
      latin1: iconv.encode("Grüße café", "latin1").toString("hex"), win1252: iconv.encode("€ “q”", "win1252").toString("hex"),
      sjis: iconv.encode("日本", "shiftjis").toString("hex"), utf16: iconv.encode("hi", "utf16le").toString("hex"),
      back: iconv.decode(iconv.encode(s, "utf8"), "utf8") === s, cp866: iconv.decode(Buffer.from([0x8f, 0xe0, 0xa8, 0xa2, 0xa5, 0xe2]), "cp866"),
      gbk: iconv.decode(iconv.encode("中文", "gbk"), "gbk"), exists: [iconv.encodingExists("koi8-r"), iconv.encodingExists("nope")],
      bom: iconv.encode("x", "utf16", { addBOM: true }).toString("hex"),
    };
  },
  "/upload": async (request) => {
    const headers = Object.fromEntries(request.headers);
    const fields = {}, files = [];
    await new Promise((resolve, reject) => {
      const bb = busboy({ headers });
      bb.on("field", (name, val) => { fields[name] = val; });
      bb.on("file", (name, stream, info) => {
        const chunks = [];
        stream.on("data", (c) => chunks.push(c)).on("end", () => files.push({ name, ...info, size: Buffer.concat(chunks).length, text: Buffer.concat(chunks).toString() }));
      });
      bb.on("close", resolve).on("error", reject);
      Readable.fromWeb(request.body).pipe(bb);
    });
    return { fields, files };
  },
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    return Response.json(await route(request));
  },
};

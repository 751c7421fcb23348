// Blob, File and FormData (with multipart serialization for bodies).

const kBlob = Symbol("blob");

// normalizeType keeps a type only when it is printable ASCII, lowercased,
// as the File API asks.
const normalizeType = (t) => {
  if (t === undefined) return "";
  const s = String(t);
  return /^[\x20-\x7e]*$/.test(s) ? s.toLowerCase() : "";
};

class Blob {
  constructor(parts = undefined, options = undefined) {
    const chunks = [];
    if (parts !== undefined) {
      if (parts === null || typeof parts !== "object" || typeof parts[Symbol.iterator] !== "function") {
        throw new TypeError("Failed to construct 'Blob': The provided value cannot be converted to a sequence.");
      }
      for (const part of parts) {
        if (part instanceof Blob) chunks.push(part[kBlob].bytes);
        else if (internal.isBufferSource(part)) chunks.push(internal.copyBytes(part));
        else chunks.push(internal.utf8Encode(String(part)));
      }
    }
    const bytes = chunks.length === 0 ? new Uint8Array(0) : internal.concatBytes(chunks);
    internal.define(this, kBlob, { bytes, type: normalizeType(options && options.type) });
  }
  get size() { return this[kBlob].bytes.byteLength; }
  get type() { return this[kBlob].type; }
  slice(start = undefined, end = undefined, contentType = undefined) {
    const size = this.size;
    const clamp = (v, d) => {
      if (v === undefined) return d;
      v = Math.trunc(Number(v)) || 0;
      return v < 0 ? Math.max(size + v, 0) : Math.min(v, size);
    };
    const from = clamp(start, 0);
    const to = clamp(end, size);
    const b = Object.create(Blob.prototype);
    internal.define(b, kBlob, {
      bytes: this[kBlob].bytes.subarray(from, Math.max(from, to)),
      type: normalizeType(contentType),
    });
    return b;
  }
  text() { return Promise.resolve(internal.utf8Decode(this[kBlob].bytes)); }
  arrayBuffer() { return Promise.resolve(internal.copyBytes(this[kBlob].bytes).buffer); }
  bytes() { return Promise.resolve(internal.copyBytes(this[kBlob].bytes)); }
  stream() { return internal.bytesStream(internal.copyBytes(this[kBlob].bytes)); }
}
Object.defineProperty(Blob.prototype, Symbol.toStringTag, { value: "Blob", configurable: true });
internal.blobBytes = (b) => b[kBlob].bytes;
internal.makeBlob = (bytes, type) => {
  const b = Object.create(Blob.prototype);
  internal.define(b, kBlob, { bytes, type: normalizeType(type) });
  return b;
};

class File extends Blob {
  #name;
  #lastModified;
  constructor(bits, name, options = undefined) {
    if (arguments.length < 2) {
      throw new TypeError(`Failed to construct 'File': 2 arguments required, but only ${arguments.length} present.`);
    }
    super(bits, options);
    this.#name = String(name);
    this.#lastModified = options && options.lastModified !== undefined ? Number(options.lastModified) : Date.now();
  }
  get name() { return this.#name; }
  get lastModified() { return this.#lastModified; }
  get webkitRelativePath() { return ""; }
}
Object.defineProperty(File.prototype, Symbol.toStringTag, { value: "File", configurable: true });

const kForm = Symbol("formdata");
const toEntryValue = (value, filename) => {
  if (value instanceof Blob) {
    if (value instanceof File && filename === undefined) return value;
    return new File([value], filename !== undefined ? String(filename) : value instanceof File ? value.name : "blob", {
      type: value.type,
      lastModified: value instanceof File ? value.lastModified : undefined,
    });
  }
  return String(value);
};

class FormData {
  constructor(form = undefined) {
    if (form !== undefined) throw new TypeError("celld: FormData cannot be built from an HTML form element");
    internal.define(this, kForm, []);
  }
  append(name, value, filename = undefined) {
    this[kForm].push([String(name), toEntryValue(value, filename)]);
  }
  delete(name) {
    name = String(name);
    this[kForm] = this[kForm].filter(([k]) => k !== name);
  }
  get(name) {
    name = String(name);
    const e = this[kForm].find(([k]) => k === name);
    return e ? e[1] : null;
  }
  getAll(name) {
    name = String(name);
    return this[kForm].filter(([k]) => k === name).map(([, v]) => v);
  }
  has(name) {
    name = String(name);
    return this[kForm].some(([k]) => k === name);
  }
  set(name, value, filename = undefined) {
    name = String(name);
    const entry = [name, toEntryValue(value, filename)];
    const out = [];
    let placed = false;
    for (const e of this[kForm]) {
      if (e[0] !== name) out.push(e);
      else if (!placed) {
        out.push(entry);
        placed = true;
      }
    }
    if (!placed) out.push(entry);
    this[kForm] = out;
  }
  forEach(callback, thisArg = undefined) {
    for (const [k, v] of this[kForm].slice()) callback.call(thisArg, v, k, this);
  }
  keys() { return this[kForm].map(([k]) => k)[Symbol.iterator](); }
  values() { return this[kForm].map(([, v]) => v)[Symbol.iterator](); }
  entries() { return this[kForm].map(([k, v]) => [k, v])[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
}
Object.defineProperty(FormData.prototype, Symbol.toStringTag, { value: "FormData", configurable: true });

// serializeForm encodes a FormData as multipart/form-data.
internal.serializeForm = (fd) => {
  const rnd = new Uint8Array(native.randomBytes(12));
  const boundary = "----celld" + Array.from(rnd, (b) => b.toString(16).padStart(2, "0")).join("");
  const esc = (s) => s.replace(/\r\n|\r|\n/g, "\r\n").replace(/"/g, "%22").replace(/\r\n/g, "%0D%0A");
  const parts = [];
  for (const [name, value] of fd[kForm]) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${esc(name)}"`;
    if (typeof value === "string") {
      parts.push(internal.utf8Encode(`${head}\r\n\r\n${value.replace(/\r(?!\n)|(?<!\r)\n/g, "\r\n")}\r\n`));
    } else {
      head += `; filename="${esc(value.name)}"\r\nContent-Type: ${value.type || "application/octet-stream"}\r\n\r\n`;
      parts.push(internal.utf8Encode(head), value[kBlob].bytes, internal.utf8Encode("\r\n"));
    }
  }
  parts.push(internal.utf8Encode(`--${boundary}--\r\n`));
  return { bytes: internal.concatBytes(parts), contentType: `multipart/form-data; boundary=${boundary}` };
};

// parseForm builds a FormData from a body, or throws workerd's TypeError.
internal.parseForm = (contentType, bytes) => {
  const r = contentType === null ? null : native.parseFormData(contentType, bytes);
  if (r === null) {
    throw new TypeError("Unrecognized Content-Type header value. FormData can only parse the following MIME types: multipart/form-data, application/x-www-form-urlencoded");
  }
  if (typeof r === "string") throw new TypeError(r);
  const fd = new FormData();
  for (let i = 0; i < r.length; i += 2) {
    const v = r[i + 1];
    if (typeof v === "string") fd.append(r[i], v);
    else fd.append(r[i], new File([new Uint8Array(v.data)], v.filename, { type: v.type }));
  }
  return fd;
};

internal.expose("Blob", Blob);
internal.expose("File", File);
internal.expose("FormData", FormData);

// The structured-clone wire format (wire.go) inside an isolate: Go reads
// and writes JavaScript values directly (wire_goja.go); these helpers are
// the few steps it asks JavaScript for (loaded the first time it does).

internal.wire = {
  // [k0, v0, k1, v1, ...] of a Map, in insertion order.
  mapEntries(m) {
    const out = [];
    for (const [k, v] of Map.prototype.entries.call(m)) out.push(k, v);
    return out;
  },
  setValues: (s) => Array.from(Set.prototype.values.call(s)),
  dateTime: (d) => Date.prototype.getTime.call(d),
  // The primitive inside a Boolean, Number or String wrapper object.
  unwrap(w) {
    switch (Object.prototype.toString.call(w)) {
      case "[object Boolean]": return Boolean.prototype.valueOf.call(w);
      case "[object Number]": return Number.prototype.valueOf.call(w);
      default: return String.prototype.valueOf.call(w);
    }
  },
  blobBytes: (b) => internal.blobBytes(b),
  makeBlob: (buffer, type) => internal.makeBlob(new Uint8Array(buffer), type),
  makeFile: (buffer, name, type, lastModified) => new File([new Uint8Array(buffer)], name, { type, lastModified }),
  uncloneable: (v) => internal.uncloneable(v),
  detached: () => new DOMException("An ArrayBuffer is detached and could not be cloned.", "DataCloneError"),
};

// Headers is native (headers.go): case-insensitive, iterated sorted by
// lowercase name (as workerd does), values of one name joined with ", "
// except Set-Cookie, which iterates as separate entries. This file gives
// it what is easier said in JavaScript: a constructor argument that is a
// sequence of pairs, and the toStringTag.

// fillPairs adds a sequence of [name, value] pairs to h.
function fillPairs(h, init) {
  for (const pair of init) {
    const p = typeof pair === "string" ? null : Array.from(pair);
    if (p === null || p.length !== 2) {
      throw new TypeError("To initialize a Headers object from a sequence, each inner sequence must have exactly two elements.");
    }
    h.append(p[0], p[1]);
  }
}
// The class is a shell: its constructor returns the native object (a
// derived constructor that never calls super makes no `this` of its own)
// and its methods are native, put on its prototype by headersInstall.
class Headers extends null {
  constructor(init) {
    return native.headersConstruct(init, new.target);
  }
}
Object.setPrototypeOf(Headers.prototype, Object.prototype);
Object.defineProperty(Headers, "length", { value: 0 });
native.headersInstall(Headers, fillPairs);
Object.defineProperty(Headers.prototype, Symbol.toStringTag, { value: "Headers", configurable: true });

// newHeaders is new Headers(init) for the prelude's own use.
internal.newHeaders = native.headersNew;
// setGuard and getGuard: "none" or "immutable".
internal.setGuard = native.headersSetGuard;
internal.getGuard = native.headersGuard;
// headersFrom builds Headers from trusted name/value pairs (names already
// lowercase), skipping validation.
internal.headersFrom = native.headersFrom;
// appendHeaders appends headers to out as name, value, ... (sorted, each
// Set-Cookie on its own) and returns out.
internal.appendHeaders = native.headersAppendTo;
internal.headersFlat = (headers) => native.headersAppendTo([], headers);
// setDefault sets a trusted header (a lowercase name, a valid value)
// unless the name is present: the content type a body implies.
internal.setDefault = native.headersSetDefault;
internal.expose("Headers", Headers);

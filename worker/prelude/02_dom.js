// DOMException and error reporting.

const { define, expose } = internal;

// ---- DOMException ----------------------------------------------------------

const legacyCodes = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10,
  InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
  InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
  URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
};
const kDOMName = Symbol("DOMException.name");
class DOMException extends Error {
  constructor(message = "", options = "Error") {
    super(String(message));
    let name = "Error";
    if (options !== null && typeof options === "object") {
      if (options.name !== undefined) name = String(options.name);
      if ("cause" in options) define(this, "cause", options.cause);
    } else if (options !== undefined) {
      name = String(options);
    }
    define(this, kDOMName, name);
    if (!Object.prototype.hasOwnProperty.call(this, "message")) define(this, "message", "");
  }
  get name() { return this[kDOMName]; }
  get code() { return legacyCodes[this[kDOMName]] || 0; }
}
Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: "DOMException", configurable: true });
for (const [name, code] of Object.entries(legacyCodes)) {
  const constName = name.replace(/Error$/, "").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase() + "_ERR";
  Object.defineProperty(DOMException, constName, { value: code, enumerable: true });
  Object.defineProperty(DOMException.prototype, constName, { value: code, enumerable: true });
}
expose("DOMException", DOMException);

// ---- reporting -------------------------------------------------------------

internal.describe = (v) => {
  if (v instanceof Error) return v.stack || `${v.name}: ${v.message}`;
  return internal.inspect ? internal.inspect(v) : String(v);
};
internal.reportError = (e, what = "Uncaught") => {
  native.log("error", `${what} ${internal.describe(e)}`);
};
expose("reportError", function reportError(e) { internal.reportError(e); });

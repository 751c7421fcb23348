// APIs of the Workers platform that celld does not provide yet: each says
// so at first use instead of failing later as "undefined is not a function".
const unsupported = (what) => () => {
  throw new TypeError(`celld: ${what} is not supported yet`);
};
for (const name of ["HTMLRewriter", "EventSource"]) {
  internal.expose(name, function () { unsupported(name)(); });
}
const rejectCache = () => Promise.reject(new TypeError("celld: the Cache API (caches) is not supported yet"));
const cache = { match: rejectCache, put: rejectCache, delete: rejectCache };
internal.expose("caches", { default: cache, open: rejectCache });

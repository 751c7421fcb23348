// Storage transactions (ctx.storage.transaction) and the synchronous KV
// API (ctx.storage.kv) of a Durable Object.

const { kCreate } = internal;
const { run, alarmOps, keyOf, getSync, putSync, deleteSync, listSync } = internal.storageOps;

const kRolledBack = Symbol("rolledBack");
class DurableObjectTransaction {
  #S;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
    this[kRolledBack] = false;
  }
  get(keys, options = undefined) { return run(() => getSync(this.#S, keys)); }
  put(keyOrEntries, value = undefined, options = undefined) { return run(() => putSync(this.#S, keyOrEntries, value)); }
  delete(keys, options = undefined) { return run(() => deleteSync(this.#S, keys)); }
  list(options = undefined) { return run(() => listSync(this.#S, options)); }
  rollback() { this[kRolledBack] = true; }
  getAlarm(options = undefined) { return alarmOps.getAlarmOp(this.#S); }
  setAlarm(scheduledTime, options = undefined) { return alarmOps.setAlarmOp(this.#S, scheduledTime); }
  deleteAlarm(options = undefined) { return alarmOps.deleteAlarmOp(this.#S); }
}

class SyncKvStorage {
  #S;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
  }
  get(key) { return getSync(this.#S, keyOf(key)); }
  put(key, value) { putSync(this.#S, keyOf(key), value); }
  delete(key) { return this.#S.delete(keyOf(key)); }
  list(options = undefined) { return listSync(this.#S, options).entries(); }
}
internal.makeTransaction = (S) => new DurableObjectTransaction(kCreate, S);
internal.rolledBack = (txn) => txn[kRolledBack];
internal.makeSyncKv = (S) => new SyncKvStorage(kCreate, S);

package worker

import (
	"errors"
	"math"

	"github.com/celldgo/celld/cell"
	"github.com/dop251/goja"
)

// The natives behind ctx.storage (prelude/95_objects.js): synchronous
// calls into the object's cell.DB on its loop. Errors are thrown as the
// JavaScript class and message the cell package gives them (workerd's).

// jsNamed is an error that names the JavaScript class it is thrown as
// (*cell.Error, *cell.SQLError).
type jsNamed interface {
	error
	JSName() string
}

// jsError builds the JavaScript error to throw for err.
func (iso *isolate) jsError(err error) goja.Value {
	vm := iso.vm
	name, msg := "Error", err.Error()
	var named jsNamed
	if errors.As(err, &named) {
		name, msg = named.JSName(), named.Error()
	}
	if ctor, ok := goja.AssertConstructor(vm.Get(name)); ok {
		if obj, cerr := ctor(nil, vm.ToValue(msg)); cerr == nil {
			return obj
		}
	}
	return vm.NewGoError(err)
}

// storageFunc is a function of the storage object (see
// registerStorageNatives).
type storageFunc func(o *Object, call goja.FunctionCall) goja.Value

var storageFuncs = func() map[string]storageFunc {
	m := map[string]storageFunc{}
	registerStorageNatives(func(name string, f storageFunc) { m[name] = f })
	registerAlarmNatives(func(name string, f storageFunc) { m[name] = f })
	return m
}()

// storageNatives builds the object the prelude's storage classes call: an
// empty object whose prototype instantiates each function on first use.
func (o *Object) storageNatives() *goja.Object {
	vm := o.iso.vm
	s := vm.NewObject()
	if err := s.SetPrototype(vm.NewDynamicObject(storageResolver{o, s})); err != nil {
		panic(err) // a plain object takes any prototype
	}
	return s
}

type storageResolver struct {
	o *Object
	s *goja.Object
}

func (r storageResolver) Has(key string) bool { return storageFuncs[key] != nil }

func (r storageResolver) Get(key string) goja.Value {
	f := storageFuncs[key]
	if f == nil {
		return nil
	}
	o := r.o
	fn := o.iso.vm.ToValue(func(call goja.FunctionCall) goja.Value { return f(o, call) })
	if err := r.s.Set(key, fn); err != nil {
		panic(err)
	}
	return fn
}

func (r storageResolver) Set(string, goja.Value) bool { return false }
func (r storageResolver) Delete(string) bool          { return true }
func (r storageResolver) Keys() []string              { return nil }

// throw throws err as the JavaScript error it names.
func (o *Object) throw(err error) { panic(o.iso.jsError(err)) }

// pairs is [key, value, ...] with the values decoded.
func (o *Object) pairs(kvs []cell.KV) goja.Value {
	flat := make([]any, 0, 2*len(kvs))
	for _, kv := range kvs {
		flat = append(flat, kv.Key, o.iso.codec.deserialize(kv.Value))
	}
	return o.iso.vm.NewArray(flat...)
}

// registerStorageNatives registers the functions of the object the
// prelude's storage classes call (an object's isolate instantiates each on
// first use, like natives). Values cross as JavaScript values; the wire
// format is applied here.
func registerStorageNatives(set func(string, storageFunc)) {
	set("get", func(o *Object, call goja.FunctionCall) goja.Value {
		db := o.db
		codec := o.iso.codec
		v, ok, err := db.Get(call.Argument(0).String())
		if err != nil {
			o.throw(err)
		}
		if !ok {
			return goja.Undefined()
		}
		return codec.deserialize(v)
	})
	set("getMulti", func(o *Object, call goja.FunctionCall) goja.Value {
		db := o.db
		kvs, err := db.GetMulti(o.strings(call.Argument(0)))
		if err != nil {
			o.throw(err)
		}
		return o.pairs(kvs)
	})
	set("put", func(o *Object, call goja.FunctionCall) goja.Value {
		db := o.db
		codec := o.iso.codec
		key := call.Argument(0).String()
		if err := db.Put(key, codec.serialize(call.Argument(1))); err != nil {
			o.throw(err)
		}
		return goja.Undefined()
	})
	set("putMulti", func(o *Object, call goja.FunctionCall) goja.Value {
		db := o.db
		codec := o.iso.codec
		flat, _ := call.Argument(0).(*goja.Object)
		var kvs []cell.KV
		if flat != nil {
			n := int(flat.Get("length").ToInteger())
			kvs = make([]cell.KV, 0, n/2)
			for i := 0; i+1 < n; i += 2 {
				kvs = append(kvs, cell.KV{Key: flat.Get(itoa(i)).String(), Value: codec.serialize(flat.Get(itoa(i + 1)))})
			}
		}
		if err := db.PutMulti(kvs); err != nil {
			o.throw(err)
		}
		return goja.Undefined()
	})
	set("delete", func(o *Object, call goja.FunctionCall) goja.Value {
		vm := o.iso.vm
		db := o.db
		ok, err := db.Delete(call.Argument(0).String())
		if err != nil {
			o.throw(err)
		}
		return vm.ToValue(ok)
	})
	set("deleteMulti", func(o *Object, call goja.FunctionCall) goja.Value {
		vm := o.iso.vm
		db := o.db
		n, err := db.DeleteMulti(o.strings(call.Argument(0)))
		if err != nil {
			o.throw(err)
		}
		return vm.ToValue(n)
	})
	// list(start, startAfter, end, prefix, limit, reverse); null = absent.
	set("list", func(o *Object, call goja.FunctionCall) goja.Value {
		db := o.db
		opt := cell.ListOptions{
			Start:      optString(call.Argument(0)),
			StartAfter: optString(call.Argument(1)),
			End:        optString(call.Argument(2)),
			Reverse:    call.Argument(5).ToBoolean(),
		}
		if p := optString(call.Argument(3)); p != nil {
			opt.Prefix = *p
		}
		if l := call.Argument(4); !goja.IsNull(l) && !goja.IsUndefined(l) {
			f := l.ToFloat()
			n := 0
			switch {
			case f >= math.MaxInt32:
				n = math.MaxInt32
			case f >= 1:
				n = int(f)
			}
			opt.Limit = &n
		}
		kvs, err := db.List(opt)
		if err != nil {
			o.throw(err)
		}
		return o.pairs(kvs)
	})
	set("deleteAll", func(o *Object, _ goja.FunctionCall) goja.Value {
		db := o.db
		if err := db.DeleteAll(); err != nil {
			o.throw(err)
		}
		o.alarmChanged()
		return goja.Undefined()
	})
	set("sync", func(o *Object, _ goja.FunctionCall) goja.Value {
		db := o.db
		if err := db.Sync(); err != nil {
			o.throw(err)
		}
		return goja.Undefined()
	})
	set("txnBegin", func(o *Object, _ goja.FunctionCall) goja.Value {
		vm := o.iso.vm
		h, err := o.txnBegin()
		if err != nil {
			o.throw(err)
		}
		return vm.ToValue(h)
	})
	set("txnEnd", func(o *Object, call goja.FunctionCall) goja.Value {
		err := o.txnEnd(int(call.Argument(0).ToInteger()), call.Argument(1).ToBoolean())
		o.alarmChanged()
		if err != nil {
			o.throw(err)
		}
		return goja.Undefined()
	})
	set("txnSync", func(o *Object, call goja.FunctionCall) goja.Value {
		vm := o.iso.vm
		db := o.db
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("transactionSync() requires a function"))
		}
		var result goja.Value
		o.syncTxns++
		err := db.Transaction(func() error {
			v, err := fn(goja.Undefined())
			result = v
			return err
		})
		o.syncTxns--
		o.alarmChanged()
		if err != nil {
			var ex *goja.Exception
			if errors.As(err, &ex) {
				panic(ex)
			}
			var intr *goja.InterruptedError
			if errors.As(err, &intr) {
				panic(intr)
			}
			o.throw(err)
		}
		return result
	})
	set("exec", func(o *Object, call goja.FunctionCall) goja.Value {
		db := o.db
		var args []any
		if a, ok := call.Argument(1).(*goja.Object); ok {
			n := int(a.Get("length").ToInteger())
			args = make([]any, n)
			for i := range n {
				args[i] = o.sqlArg(a.Get(itoa(i)))
			}
		}
		cur, err := db.Exec(call.Argument(0).String(), args...)
		if err != nil {
			o.throw(err)
		}
		return o.cursorObject(cur)
	})
	set("databaseSize", func(o *Object, _ goja.FunctionCall) goja.Value {
		vm := o.iso.vm
		db := o.db
		n, err := db.DatabaseSize()
		if err != nil {
			o.throw(err)
		}
		return vm.ToValue(n)
	})
	// gate(+1) / gate(-1, ok, tunneledError): blockConcurrencyWhile.
	set("gate", func(o *Object, call goja.FunctionCall) goja.Value {
		if call.Argument(0).ToInteger() > 0 {
			o.gate++
			o.iso.background++
			return goja.Undefined()
		}
		o.gate--
		o.iso.background--
		if !call.Argument(1).ToBoolean() {
			ex, _ := o.exception(call.Argument(2))
			o.reset(ex)
		}
		o.drain()
		return goja.Undefined()
	})
	set("abort", func(o *Object, call goja.FunctionCall) goja.Value {
		ex, _ := o.exception(call.Argument(0))
		o.reset(ex)
		return goja.Undefined()
	})
}

func optString(v goja.Value) *string {
	if v == nil || goja.IsNull(v) || goja.IsUndefined(v) {
		return nil
	}
	s := v.String()
	return &s
}

// strings reads a JavaScript array of strings.
func (o *Object) strings(v goja.Value) []string {
	a, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	n := int(a.Get("length").ToInteger())
	out := make([]string, n)
	for i := range n {
		out[i] = a.Get(itoa(i)).String()
	}
	return out
}

// sqlArg converts a bound value the prelude normalized (null, number,
// string, Uint8Array) for cell.DB.Exec.
func (o *Object) sqlArg(v goja.Value) any {
	switch {
	case v == nil || goja.IsNull(v) || goja.IsUndefined(v):
		return nil
	case goja.IsNumber(v):
		return v.ToFloat()
	case goja.IsString(v):
		return v.String()
	}
	if _, ok := v.(*goja.Object); ok {
		return append([]byte{}, o.iso.bytesArg(v)...) // never nil: a BLOB, not NULL
	}
	return v.String()
}

// row converts a result row: integers become doubles, as in workerd
// (precision is lost past 2^53), BLOBs ArrayBuffers.
func (o *Object) row(row cell.Row) goja.Value {
	vm := o.iso.vm
	vals := make([]any, len(row))
	for i, c := range row {
		switch x := c.(type) {
		case int64:
			vals[i] = float64(x)
		case []byte:
			vals[i] = vm.NewArrayBuffer(x)
		default:
			vals[i] = x
		}
	}
	return vm.NewArray(vals...)
}

// cursorObject wraps a cell cursor for SqlStorageCursor.
func (o *Object) cursorObject(cur *cell.Cursor) goja.Value {
	vm := o.iso.vm
	c := vm.NewObject()
	throw := func(err error) { panic(o.iso.jsError(err)) }
	_ = c.Set("next", func(goja.FunctionCall) goja.Value {
		row, ok, err := cur.Next()
		if err != nil {
			throw(err)
		}
		if !ok {
			return goja.Null()
		}
		return o.row(row)
	})
	_ = c.Set("all", func(goja.FunctionCall) goja.Value {
		rows, err := cur.ToArray()
		if err != nil {
			throw(err)
		}
		out := make([]any, len(rows))
		for i, r := range rows {
			out[i] = o.row(r)
		}
		return vm.NewArray(out...)
	})
	_ = c.Set("one", func(goja.FunctionCall) goja.Value {
		row, err := cur.One()
		if err != nil {
			throw(err)
		}
		return o.row(row)
	})
	_ = c.Set("columnNames", func(goja.FunctionCall) goja.Value {
		names := cur.ColumnNames()
		out := make([]any, len(names))
		for i, n := range names {
			out[i] = n
		}
		return vm.NewArray(out...)
	})
	_ = c.Set("rowsRead", func(goja.FunctionCall) goja.Value { return vm.ToValue(cur.RowsRead()) })
	_ = c.Set("rowsWritten", func(goja.FunctionCall) goja.Value { return vm.ToValue(cur.RowsWritten()) })
	return c
}

// An async transaction (storage.transaction) spans several turns of the
// loop, but cell.DB.Transaction takes a callback. So each one runs
// Transaction on a helper goroutine whose callback waits for the verdict;
// the loop blocks while the helper begins and ends it, so the DB is still
// used by one goroutine at a time. Transactions nest as a stack (SQLite
// savepoints): one that settles while a newer one, started by another
// event, is still open is finished when that one is; rolling back the
// outer one then also undoes the inner one, as one connection must.
type openTxn struct {
	handle  int
	verdict chan error // nil commits, cell.ErrRollback rolls back
	result  chan error // Transaction's return
	settled bool
	commit  bool
}

func (o *Object) txnBegin() (int, error) {
	if o.syncTxns > 0 {
		return 0, errors.New("celld: storage.transaction() cannot start inside transactionSync()")
	}
	t := &openTxn{verdict: make(chan error), result: make(chan error, 1)}
	began := make(chan struct{})
	db := o.db
	go func() {
		t.result <- db.Transaction(func() error {
			close(began)
			return <-t.verdict
		})
	}()
	select {
	case <-began:
	case err := <-t.result:
		return 0, err
	}
	t.handle = len(o.txns) + 1
	for _, x := range o.txns {
		if x.handle >= t.handle {
			t.handle = x.handle + 1
		}
	}
	o.txns = append(o.txns, t)
	return t.handle, nil
}

// txnEnd settles a transaction; it is finished at once when it is the
// innermost open one, else when the ones inside it are.
func (o *Object) txnEnd(handle int, commit bool) error {
	var err error
	for _, t := range o.txns {
		if t.handle == handle && !t.settled {
			t.settled, t.commit = true, commit
		}
	}
	for len(o.txns) > 0 && o.txns[len(o.txns)-1].settled {
		t := o.txns[len(o.txns)-1]
		o.txns = o.txns[:len(o.txns)-1]
		if e := finishTxn(t, t.commit); t.handle == handle {
			err = e
		}
	}
	return err
}

func finishTxn(t *openTxn, commit bool) error {
	if commit {
		t.verdict <- nil
	} else {
		t.verdict <- cell.ErrRollback
	}
	return <-t.result
}

// rollbackAll rolls back transactions left open when the object stops.
func (o *Object) rollbackAll() {
	for i := len(o.txns) - 1; i >= 0; i-- {
		if err := finishTxn(o.txns[i], false); err != nil {
			o.iso.log.Warn("roll back transaction left open", "error", err)
		}
	}
	o.txns = nil
}

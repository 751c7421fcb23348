package worker

import (
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The prelude is the JavaScript half of the Web APIs (prelude/*.js). Each
// file is a function (native, internal, global). Only the files in
// eagerPrelude run when an isolate starts; every other file runs the
// first time something looks up a name it defines, so an isolate that
// never touches streams, crypto or URL does not pay for them. That keeps a
// resident Durable Object small: most objects use a few APIs.
//
// A name is found through a prototype: the global object's prototype, and
// the prototype of `internal` (the helpers the files share with each other
// and with Go), are dynamic objects that know which file defines which
// name. Looking a name up there runs the file (its own names then live on
// the object itself, so later lookups never reach the prototype again).
// Natives work the same way: `native` is empty until prelude code looks a
// function up, which instantiates it from nativeFuncs.
//
// What a script can see of this: until a file has run, its globals are not
// own properties of globalThis but inherited from its prototype. So
// Object.getOwnPropertyNames(globalThis) lists them only once used, and
// Object.getPrototypeOf(globalThis) is that dynamic object; `delete` of
// such a global before its file ran does not remove it. A script that
// assigns such a global keeps its own value (expose leaves it in place).

//go:embed prelude/*.js
var preludeFS embed.FS

// eagerPrelude lists the files every isolate runs at start: they change
// built-ins rather than define names, so they cannot wait for a lookup.
var eagerPrelude = map[string]bool{"prelude/00_builtins.js": true}

type preludeModule struct {
	name    string
	program *goja.Program
	eager   bool
}

// preludeSet is the compiled prelude with the names each lazy file
// defines, shared read-only by every isolate of the process.
type preludeSet struct {
	modules    []preludeModule
	globalOf   map[string]int // global name -> index of the lazy file defining it
	internalOf map[string]int // internal name -> index of the lazy file defining it
}

// compilePrelude compiles the embedded prelude once per process and finds
// out which names each file defines by running all of it, in order, in a
// scratch isolate.
var compilePrelude = sync.OnceValues(func() (*preludeSet, error) {
	names, err := fs.Glob(preludeFS, "prelude/*.js")
	if err != nil {
		return nil, fmt.Errorf("list prelude: %w", err)
	}
	sort.Strings(names)
	ps := &preludeSet{globalOf: map[string]int{}, internalOf: map[string]int{}}
	for _, n := range names {
		src, err := preludeFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read prelude %s: %w", n, err)
		}
		prog, err := goja.Compile(n, "(function (native, internal, global) {\n\"use strict\";\n"+string(src)+"\n})", true)
		if err != nil {
			return nil, fmt.Errorf("compile prelude %s: %w", n, err)
		}
		ps.modules = append(ps.modules, preludeModule{name: n, program: prog, eager: eagerPrelude[n]})
	}
	if err := ps.survey(); err != nil {
		return nil, err
	}
	return ps, nil
})

// survey runs every file in order in a scratch isolate and records the
// global and internal names each lazy file adds. A lazy file must only
// add names: changing a name another file defined, or a global that
// exists beforehand, would depend on the order files happen to load in.
func (ps *preludeSet) survey() error {
	discard := slog.New(slog.DiscardHandler)
	iso := &isolate{rt: &Runtime{log: discard}, log: discard}
	iso.vm, iso.timerByID, iso.origin = goja.New(), map[int64]*timer{}, time.Now()
	iso.prelude = ps
	iso.modState = make([]uint8, len(ps.modules))
	vm := iso.vm
	iso.native = vm.NewObject()
	_ = iso.native.SetPrototype(vm.NewDynamicObject(nativeResolver{iso}))
	iso.internal = vm.NewObject()
	global := vm.GlobalObject()
	snapshot := func(o *goja.Object) map[string]goja.Value {
		m := map[string]goja.Value{}
		for _, k := range o.GetOwnPropertyNames() {
			m[k] = o.Get(k)
		}
		return m
	}
	for i, m := range ps.modules {
		g0, in0 := snapshot(global), snapshot(iso.internal)
		if err := iso.runModule(i); err != nil {
			return err
		}
		g1, in1 := snapshot(global), snapshot(iso.internal)
		if m.eager {
			continue
		}
		for _, d := range []struct {
			what          string
			before, after map[string]goja.Value
			of            map[string]int
		}{{"global", g0, g1, ps.globalOf}, {"internal", in0, in1, ps.internalOf}} {
			for k, v := range d.after {
				old, existed := d.before[k]
				if !existed {
					d.of[k] = i
					continue
				}
				if !old.SameAs(v) {
					return fmt.Errorf("prelude %s: redefines %s %q (files loaded on demand may only add names)", m.name, d.what, k)
				}
			}
		}
	}
	return nil
}

// Module states in isolate.modState.
const (
	moduleLoading = 1
	moduleLoaded  = 2
)

// installPrelude prepares a new isolate: the lazy objects behind native,
// internal and the global object, then the eager files.
func (iso *isolate) installPrelude(ps *preludeSet) error {
	vm := iso.vm
	iso.prelude = ps
	iso.modState = make([]uint8, len(ps.modules))
	iso.native = vm.NewObject()
	if err := iso.native.SetPrototype(vm.NewDynamicObject(nativeResolver{iso})); err != nil {
		return err
	}
	iso.internal = vm.NewObject()
	if err := iso.internal.SetPrototype(vm.NewDynamicObject(lazyNames{iso, ps.internalOf, iso.internal})); err != nil {
		return err
	}
	global := vm.GlobalObject()
	resolver := vm.NewDynamicObject(lazyNames{iso, ps.globalOf, global})
	if err := resolver.SetPrototype(global.Prototype()); err != nil {
		return err
	}
	if err := global.SetPrototype(resolver); err != nil {
		return err
	}
	for i, m := range ps.modules {
		if m.eager {
			if err := iso.runModule(i); err != nil {
				return err
			}
		}
	}
	p, _, _ := vm.NewPromise()
	iso.promiseProto = vm.ToValue(p).(*goja.Object).Prototype()
	iso.promiseThen = iso.promiseProto.Get("then")
	originals, _ := iso.internal.Get("originals").(*goja.Object)
	if originals == nil {
		return fmt.Errorf("prelude: internal.originals missing")
	}
	settle, ok := goja.AssertFunction(iso.internal.Get("settle"))
	if !ok {
		return fmt.Errorf("prelude: internal.settle missing")
	}
	iso.settle = settle
	iso.originals = originals
	return nil
}

// runModule runs prelude file i unless it has run (or is running).
func (iso *isolate) runModule(i int) error {
	if iso.modState[i] != 0 {
		return nil
	}
	iso.modState[i] = moduleLoading
	iso.loading = append(iso.loading, i)
	defer func() {
		iso.modState[i] = moduleLoaded
		iso.loading = iso.loading[:len(iso.loading)-1]
	}()
	m := &iso.prelude.modules[i]
	v, err := iso.vm.RunProgram(m.program)
	if err != nil {
		return fmt.Errorf("run prelude %s: %w", m.name, err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return fmt.Errorf("run prelude %s: not a function", m.name)
	}
	if _, err := fn(goja.Undefined(), iso.native, iso.internal, iso.vm.GlobalObject()); err != nil {
		return fmt.Errorf("run prelude %s: %w", m.name, err)
	}
	return nil
}

// original returns what the prelude exposed as the global name (not what
// a script may have put there since), or nil when the file defining it
// has not run: a class the prelude has not defined yet has no instances.
func (iso *isolate) original(name string) *goja.Object {
	o, _ := iso.originals.Get(name).(*goja.Object)
	return o
}

// preludeGlobal returns what the prelude exposes as name, running the
// file that defines it if it has not run.
func (iso *isolate) preludeGlobal(name string) *goja.Object {
	if o := iso.original(name); o != nil {
		return o
	}
	if i, ok := iso.prelude.globalOf[name]; ok {
		if err := iso.runModule(i); err != nil {
			panic(err)
		}
	}
	return iso.original(name)
}

// lazyNames is the dynamic prototype of the global object or of internal:
// it has the names of the files that have not run yet, and looking one up
// runs its file.
type lazyNames struct {
	iso   *isolate
	of    map[string]int
	owner *goja.Object
}

func (l lazyNames) pending(key string) (int, bool) {
	i, ok := l.of[key]
	if !ok {
		return 0, false
	}
	if st := l.iso.modState[i]; st != 0 {
		if st == moduleLoading && (len(l.iso.loading) == 0 || l.iso.loading[len(l.iso.loading)-1] != i) {
			// A file that is running needs, through another file, a name it
			// has yet to define: a cycle between files (tests look for it).
			l.iso.preludeCycles++
		}
		return 0, false
	}
	return i, true
}

func (l lazyNames) Has(key string) bool {
	_, ok := l.pending(key)
	return ok
}

func (l lazyNames) Get(key string) goja.Value {
	i, ok := l.pending(key)
	if !ok {
		return nil
	}
	if err := l.iso.runModule(i); err != nil {
		panic(err)
	}
	return l.owner.Get(key)
}

// Set is reached only by assigning to the prototype itself; an assignment
// to the owner defines the name on the owner.
func (l lazyNames) Set(string, goja.Value) bool { return false }
func (l lazyNames) Delete(string) bool          { return true }
func (l lazyNames) Keys() []string              { return nil }

// nativeFunc is a host function of the prelude's `native` object. It is
// registered once per process (nativeFuncs) and becomes a JavaScript
// function in an isolate the first time prelude code looks it up there.
type nativeFunc func(iso *isolate, call goja.FunctionCall) goja.Value

var nativeFuncs = func() map[string]nativeFunc {
	m := map[string]nativeFunc{}
	set := func(name string, f nativeFunc) {
		if m[name] != nil {
			panic("worker: native " + name + " registered twice")
		}
		m[name] = f
	}
	registerCoreNatives(set)
	registerTextNatives(set)
	registerJSONNatives(set)
	registerURLNatives(set)
	registerCryptoNatives(set)
	registerAsymNatives(set)
	registerSymNatives(set)
	registerCompressNatives(set)
	registerIntlNatives(set)
	registerObjectNatives(set)
	registerCacheNatives(set)
	registerSocketNatives(set)
	registerHTMLNatives(set)
	registerCallbackNatives(set)
	registerFetchNatives(set)
	registerHeadersNatives(set)
	registerResponseNatives(set)
	registerRequestNatives(set)
	registerStreamNatives(set)
	registerBufferNatives(set)
	registerNodeNatives(set)
	return m
}()

// nativeResolver is the prototype of an isolate's `native` object.
type nativeResolver struct{ iso *isolate }

func (n nativeResolver) Has(key string) bool { return nativeFuncs[key] != nil }

func (n nativeResolver) Get(key string) goja.Value {
	f := nativeFuncs[key]
	if f == nil {
		return nil
	}
	iso := n.iso
	fn := iso.vm.ToValue(func(call goja.FunctionCall) goja.Value { return f(iso, call) })
	if err := iso.native.Set(key, fn); err != nil {
		panic(err)
	}
	return fn
}

func (n nativeResolver) Set(string, goja.Value) bool { return false }
func (n nativeResolver) Delete(string) bool          { return true }
func (n nativeResolver) Keys() []string              { return nil }

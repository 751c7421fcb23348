package worker

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/dop251/goja"
)

// NodeMode is a Worker's Node.js compatibility, as its compatibility flags
// and date decide it (deploy.NodeCompat).
type NodeMode int

// Node.js compatibility modes (the same order as deploy.NodeMode).
const (
	NodeOff NodeMode = iota // no node:* modules
	NodeALS                 // nodejs_als: node:async_hooks only
	NodeV1                  // nodejs_compat: node:* modules, no globals
	NodeV2                  // nodejs_compat_v2: also Buffer, process, global, setImmediate
)

// setupNode tells the prelude which node:* modules the script may load
// and, in v2, defines the globals workerd defines. With NodeProcessEnv,
// process.env holds the string vars as they are and the others as JSON,
// as in workerd.
func (iso *isolate) setupNode() error {
	mode := iso.rt.cfg.Node
	if mode == NodeOff {
		return nil
	}
	names := make([]string, 0, len(iso.rt.cfg.Vars))
	for k := range iso.rt.cfg.Vars {
		if iso.rt.cfg.NodeProcessEnv {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	env := make([]any, 0, 2*len(names))
	for _, k := range names {
		v := iso.rt.cfg.Vars[k]
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("encode var %s: %w", k, err)
			}
			s = string(b)
		}
		env = append(env, k, s)
	}
	setup, ok := goja.AssertFunction(iso.internal.Get("nodeSetup"))
	if !ok {
		return fmt.Errorf("prelude: internal.nodeSetup missing")
	}
	if _, err := setup(goja.Undefined(), iso.vm.ToValue(int(mode)), iso.vm.NewArray(env...)); err != nil {
		return fmt.Errorf("set up Node.js compatibility: %w", err)
	}
	return nil
}

// asyncCtx is what goja's async context tracker carries from where a
// promise reaction was attached to where it runs: the request's scope
// and the AsyncLocalStorage frame (an immutable JS Map, or nil).
var proxyType = reflect.TypeOf(goja.Proxy{})

type asyncCtx struct {
	scope *eventScope
	als   goja.Value
}

func registerNodeNatives(set func(string, nativeFunc)) {
	// alsFrame() -> the current AsyncLocalStorage frame (undefined: none)
	set("alsFrame", func(iso *isolate, _ goja.FunctionCall) goja.Value {
		if iso.als == nil {
			return goja.Undefined()
		}
		return iso.als
	})
	// alsEnter(frame) makes frame current; the caller restores the old one.
	set("alsEnter", func(iso *isolate, call goja.FunctionCall) goja.Value {
		v := call.Argument(0)
		if goja.IsUndefined(v) || goja.IsNull(v) {
			iso.als = nil
		} else {
			iso.als = v
		}
		return goja.Undefined()
	})
	// isProxy(v) -> whether v is a Proxy (util.types.isProxy)
	set("isProxy", func(iso *isolate, call goja.FunctionCall) goja.Value {
		o, ok := call.Argument(0).(*goja.Object)
		return iso.vm.ToValue(ok && o.ExportType() == proxyType)
	})
	registerNodeCryptoNatives(set)
	registerZlibNatives(set)
	registerNodeKeyNatives(set)
}

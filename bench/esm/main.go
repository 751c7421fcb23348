// Command esm bundles a Worker's main module as one ES module for workerd,
// as Wrangler does (esbuild, the workerd/worker/browser conditions,
// cloudflare:* left as imports), so bench/run.sh runs the same sources on
// workerd and on celld without installing Wrangler.
//
//	esm -o OUT.js ENTRY.js
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: esm -o OUT.js ENTRY.js")
		os.Exit(2)
	}
	res := api.Build(api.BuildOptions{
		EntryPoints: []string{flag.Arg(0)},
		Outfile:     *out,
		Bundle:      true,
		Write:       true,
		Format:      api.FormatESModule,
		Platform:    api.PlatformNeutral,
		Target:      api.ES2022,
		External:    []string{"cloudflare:*", "node:*"},
		Conditions:  []string{"workerd", "worker", "browser"},
		MainFields:  []string{"browser", "module", "main"},
		LogLevel:    api.LogLevelError,
	})
	if len(res.Errors) > 0 {
		os.Exit(1)
	}
}

package server

import (
	"fmt"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/r2"
	"github.com/celldgo/celld/r2/r2js"
	"github.com/celldgo/celld/worker"
)

// r2Bindings builds the env bindings of dep's R2 buckets: objects under
// r2/<bucket_name>/ in the fleet's own bucket.
func (o *objects) r2Bindings(dep *deploy.Deployment) map[string]worker.Binding {
	out := map[string]worker.Binding{}
	for _, rb := range dep.Manifest.R2Buckets {
		b, err := r2.Open(o.store, rb.BucketName)
		if err != nil {
			out[rb.Binding] = func(*worker.Host) (goja.Value, error) {
				return nil, fmt.Errorf("r2 binding %s: %w", rb.Binding, err)
			}
			continue
		}
		out[rb.Binding] = r2js.Binding(b)
	}
	return out
}

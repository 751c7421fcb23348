package bucket_test

import (
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/bucket/buckettest"
)

func TestMem_Contract(t *testing.T) {
	buckettest.Run(t, func(t *testing.T) bucket.Store { return bucket.NewMem() }, buckettest.Options{})
}

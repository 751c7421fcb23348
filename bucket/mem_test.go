package bucket_test

import (
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/bucket/buckettest"
)

func TestMem_Contract(t *testing.T) {
	buckettest.Run(t, func(t *testing.T) bucket.Store { return bucket.NewMem() }, buckettest.Options{})
}

func TestMem_Objects(t *testing.T) {
	buckettest.RunObjects(t, func(t *testing.T) bucket.Objects { return bucket.NewMem() }, buckettest.ObjectOptions{})
}

package bucket_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/bucket/buckettest"
)

func newFile(t *testing.T) (*bucket.File, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "store")
	s, err := bucket.NewFile(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

func TestFile_Contract(t *testing.T) {
	buckettest.Run(t, func(t *testing.T) bucket.Store { s, _ := newFile(t); return s }, buckettest.Options{})
}

func TestFile_PlainFilesAndString(t *testing.T) {
	s, root := newFile(t)
	if got, want := s.String(), "file://"+root; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	o, err := s.Put(t.Context(), "cells/x/own.json", []byte(`{"owner":"n1"}`), bucket.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "cells", "x", "own.json"))
	if err != nil || string(got) != `{"owner":"n1"}` {
		t.Fatalf("file on disk = %q, %v", got, err)
	}
	h, err := s.Head(t.Context(), "cells/x/own.json")
	if err != nil || h.ETag != o.ETag || h.Size != o.Size {
		t.Fatalf("head = %+v, %v; put returned %+v", h, err, o)
	}
	if _, err := bucket.NewFile("relative/dir"); err == nil {
		t.Fatal("NewFile accepted a relative root")
	}
}

// Rewriting identical bytes must give a new ETag each time, and never one
// an earlier version had (an inode can be reused within one clock tick).
func TestFile_ETagNeverRecurs(t *testing.T) {
	s, _ := newFile(t)
	seen := map[string]int{}
	o, err := s.Put(t.Context(), "k", []byte("same"), bucket.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if j, dup := seen[o.ETag]; dup {
			t.Fatalf("write %d has the ETag %q of write %d", i, o.ETag, j)
		}
		seen[o.ETag] = i
		_, g, err := s.Get(t.Context(), "k")
		if err != nil || g.ETag != o.ETag {
			t.Fatalf("get etag = %q, %v; put returned %q", g.ETag, err, o.ETag)
		}
		if o, err = s.Put(t.Context(), "k", []byte("same"), bucket.IfMatch(o.ETag)); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
}

func TestFile_KeyConflict(t *testing.T) {
	s, root := newFile(t)
	ctx := t.Context()
	wantConflict := func(err error, keys ...string) {
		t.Helper()
		if !errors.Is(err, bucket.ErrInvalidKey) || bucket.OutcomeOf(err) != bucket.Failed {
			t.Fatalf("got %v (outcome %v), want a definite ErrInvalidKey", err, bucket.OutcomeOf(err))
		}
		for _, k := range keys {
			if !strings.Contains(err.Error(), strconv.Quote(k)) {
				t.Fatalf("error %q does not name %q", err, k)
			}
		}
	}
	// An object where a directory is needed.
	if _, err := s.Put(ctx, "cells/x", []byte("x"), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Put(ctx, "cells/x/own.json", []byte("y"), bucket.IfAbsent())
	wantConflict(err, "cells/x", "cells/x/own.json")
	_, err = s.Put(ctx, "cells/x/deeper/own.json", []byte("y"), bucket.Cond{})
	wantConflict(err, "cells/x", "cells/x/deeper/own.json")
	if _, _, err := s.Get(ctx, "cells/x/own.json"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("get under an object: %v", err)
	}
	// A directory where an object is needed.
	if _, err := s.Put(ctx, "dir/k/leaf", []byte("l"), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, "dir/k", []byte("k"), bucket.Cond{})
	wantConflict(err, "dir/k", "dir/k/leaf")
	if _, err := s.Head(ctx, "dir/k"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("head of a directory: %v", err)
	}
	if err := s.Delete(ctx, "dir/k"); err != nil {
		t.Fatalf("delete of a directory: %v", err)
	}
	if _, err := s.Head(ctx, "dir/k/leaf"); err != nil {
		t.Fatalf("delete of the directory removed what was under it: %v", err)
	}
	// Once the other key is gone the path is free, and empty directories
	// have been pruned (but not the root).
	if err := s.Delete(ctx, "dir/k/leaf"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "dir")); !os.IsNotExist(err) {
		t.Fatalf("empty directory left after delete: %v", err)
	}
	if _, err := s.Put(ctx, "dir/k", []byte("k"), bucket.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "cells/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "cells/x/own.json", []byte("y"), bucket.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "cells/x/own.json"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "dir/k"); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) != 1 || ents[0].Name() != ".celld-store" {
		t.Fatalf("root after deleting everything: %v, %v", ents, err)
	}
}

func TestFile_ReservedKeys(t *testing.T) {
	s, root := newFile(t)
	ctx := t.Context()
	for _, k := range []string{".celld-store", ".celld-store/locks/0", ".celld-tmp-x", "a/.celld-tmp-x", "../escape", "a/../../b"} {
		if _, err := s.Put(ctx, k, []byte("x"), bucket.Cond{}); !errors.Is(err, bucket.ErrInvalidKey) {
			t.Errorf("put %q: %v, want ErrInvalidKey", k, err)
		}
		if _, _, err := s.Get(ctx, k); !errors.Is(err, bucket.ErrInvalidKey) {
			t.Errorf("get %q: %v, want ErrInvalidKey", k, err)
		}
		if err := s.Delete(ctx, k); !errors.Is(err, bucket.ErrInvalidKey) {
			t.Errorf("delete %q: %v, want ErrInvalidKey", k, err)
		}
	}
	// Only the first segment is reserved.
	if _, err := s.Put(ctx, "x/.celld-store", []byte("ok"), bucket.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "outside"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", ".celld", ".celld-store/", "../", "x/../../"} {
		objs, err := bucket.ListAll(ctx, s, prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.Key != "x/.celld-store" {
				t.Errorf("list %q returned %q", prefix, o.Key)
			}
		}
	}
}

func TestFile_StrayFilesNotListed(t *testing.T) {
	s, root := newFile(t)
	ctx := t.Context()
	if _, err := s.Put(ctx, "c/k", []byte("v"), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	// Crash debris, and a file put there by hand under a name no key has.
	for _, p := range []string{"c/.celld-tmp-xyz", ".celld-tmp-abc", "c/bad\x01name"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"", "c/", "c/.celld", ".celld"} {
		objs, err := bucket.ListAll(ctx, s, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range objs {
			keys = append(keys, o.Key)
		}
		want := ""
		if strings.HasPrefix("c/k", prefix) {
			want = "c/k"
		}
		if strings.Join(keys, " ") != want {
			t.Errorf("list %q = %v, want [%s]", prefix, keys, want)
		}
	}
}

func TestFile_CanceledContext(t *testing.T) {
	s, _ := newFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Put(ctx, "k", []byte("v"), bucket.Cond{})
	if !errors.Is(err, bucket.ErrUnavailable) || bucket.OutcomeOf(err) != bucket.Failed {
		t.Fatalf("put with a canceled context: %v", err)
	}
	if _, _, err := s.Get(t.Context(), "k"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("canceled put wrote the key: %v", err)
	}
}

// The cross-process tests re-execute this test binary; each child makes one
// Put against the same root and prints its outcome.
const (
	envRoot  = "CELLD_FILE_TEST_ROOT"
	envID    = "CELLD_FILE_TEST_ID"
	envETag  = "CELLD_FILE_TEST_ETAG" // empty: IfAbsent
	envStart = "CELLD_FILE_TEST_START"
	raceKey  = "race/cross-process"
)

func TestFile_CrossProcessHelper(t *testing.T) {
	root := os.Getenv(envRoot)
	if root == "" {
		t.Skip("helper for the cross-process tests")
	}
	s, err := bucket.NewFile(root)
	if err != nil {
		t.Fatal(err)
	}
	cond := bucket.IfAbsent()
	if etag := os.Getenv(envETag); etag != "" {
		cond = bucket.IfMatch(etag)
	}
	if start, err := strconv.ParseInt(os.Getenv(envStart), 10, 64); err == nil {
		time.Sleep(time.Until(time.Unix(0, start)))
	}
	_, err = s.Put(t.Context(), raceKey, []byte("claimant "+os.Getenv(envID)), cond)
	switch bucket.OutcomeOf(err) {
	case bucket.Applied:
		fmt.Println("applied")
	case bucket.Rejected:
		fmt.Println("rejected")
	default:
		fmt.Println("error:", err)
	}
}

// raceProcesses runs n children and returns the ids that applied and the
// number rejected.
func raceProcesses(t *testing.T, root, etag string, n int) (applied []int, rejected int) {
	t.Helper()
	start := time.Now().Add(time.Second).UnixNano()
	outs := make([]bytes.Buffer, n)
	var wg sync.WaitGroup
	for i := range n {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFile_CrossProcessHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), envRoot+"="+root, envID+"="+strconv.Itoa(i), envETag+"="+etag, envStart+"="+strconv.FormatInt(start, 10))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for i := range n {
		var got []string
		sc := bufio.NewScanner(&outs[i])
		for sc.Scan() {
			switch line := sc.Text(); line {
			case "applied", "rejected":
				got = append(got, line)
			}
		}
		switch {
		case len(got) != 1:
			t.Errorf("child %d printed no single outcome:\n%s", i, outs[i].String())
		case got[0] == "applied":
			applied = append(applied, i)
		default:
			rejected++
		}
	}
	return applied, rejected
}

func TestFile_CrossProcessCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	s, root := newFile(t)
	applied, rejected := raceProcesses(t, root, "", 8)
	if len(applied) != 1 || rejected != 7 {
		t.Fatalf("8 processes creating one key: applied by %v, %d rejected; want one and 7", applied, rejected)
	}
	got, _, err := s.Get(t.Context(), raceKey)
	if want := fmt.Sprintf("claimant %d", applied[0]); err != nil || string(got) != want {
		t.Fatalf("get = %q, %v; want %q", got, err, want)
	}
}

func TestFile_CrossProcessCAS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	s, root := newFile(t)
	base, err := s.Put(t.Context(), raceKey, []byte("base"), bucket.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	applied, rejected := raceProcesses(t, root, base.ETag, 8)
	if len(applied) != 1 || rejected != 7 {
		t.Fatalf("8 processes swapping from one ETag: applied by %v, %d rejected; want one and 7", applied, rejected)
	}
	got, _, err := s.Get(t.Context(), raceKey)
	if want := fmt.Sprintf("claimant %d", applied[0]); err != nil || string(got) != want {
		t.Fatalf("get = %q, %v; want %q", got, err, want)
	}
}

func TestFile_Objects(t *testing.T) {
	buckettest.RunObjects(t, func(t *testing.T) bucket.Objects { s, _ := newFile(t); return s }, buckettest.ObjectOptions{})
}

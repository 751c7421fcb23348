package server

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/wake"
)

// holdStore holds every PUT of a wake entry until release is closed.
type holdStore struct {
	bucket.Store
	release chan struct{}
	mu      sync.Mutex
	held    []string
}

func (s *holdStore) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	if strings.HasPrefix(key, wake.EntriesPrefix) {
		s.mu.Lock()
		s.held = append(s.held, key)
		s.mu.Unlock()
		select {
		case <-s.release:
		case <-ctx.Done():
			return bucket.Object{}, ctx.Err()
		}
	}
	return s.Store.Put(ctx, key, data, cond)
}

func startAlarmNode(t *testing.T, store bucket.Store) string {
	t.Helper()
	if _, err := deploy.Deploy(context.Background(), store, "../cmd/celld/testdata/alarms", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	return runTestNode(t, Options{Store: store, Node: "alarms"})
}

// The output gate holds a response that revealed an alarm installation
// until the installation's wake entry is in the bucket.
func TestAlarmResponseWaitsForWakeEntry(t *testing.T) {
	fs, err := bucket.NewFile(filepath.Join(t.TempDir(), "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	store := &holdStore{Store: fs, release: make(chan struct{})}
	base := startAlarmNode(t, store)
	due := time.Now().Add(time.Hour).UnixMilli()
	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/arm?name=x&at=" + strconv.FormatInt(due, 10))
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{resp.StatusCode, string(b), err}
	}()
	select {
	case r := <-got:
		t.Fatalf("the response left before its wake entry was written: %+v", r)
	case <-time.After(700 * time.Millisecond):
	}
	store.mu.Lock()
	held := append([]string(nil), store.held...)
	store.mu.Unlock()
	if len(held) != 1 || !strings.HasPrefix(held[0], wake.EntriesPrefix+wake.Minute(due)+"/Timer:") {
		t.Fatalf("held PUTs %v, want the one entry of minute %s", held, wake.Minute(due))
	}
	close(store.release)
	select {
	case r := <-got:
		if r.err != nil || r.status != 200 || !strings.Contains(r.body, strconv.FormatInt(due, 10)) {
			t.Fatalf("response %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no response after the entry was written")
	}
	if _, err := fs.Head(context.Background(), held[0]); err != nil {
		t.Fatalf("entry %s: %v", held[0], err)
	}
	// Reading the alarm again reveals nothing new: no further entry.
	resp, err := http.Get(base + "/status?name=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.held) != 1 {
		t.Fatalf("entries written %v, want one", store.held)
	}
}

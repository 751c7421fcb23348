package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/server"
)

// counterHandler is a built-in cell kind for tests: each request adds its
// body (an integer) to a counter and answers the new total; "fail" makes a
// write and then fails, so the test sees whether the write survived.
func counterHandler(db *cell.DB, req []byte) ([]byte, error) {
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS c(n INTEGER NOT NULL)"); err != nil {
		return nil, err
	}
	if string(req) == "fail" {
		return nil, errors.New("refused on purpose")
	}
	add, err := strconv.Atoi(string(req))
	if err != nil {
		return nil, err
	}
	var total int64
	err = db.Transaction(func() error {
		if _, err := db.Exec("INSERT INTO c(n) VALUES (?)", int64(add)); err != nil {
			return err
		}
		cur, err := db.Exec("SELECT SUM(n) FROM c")
		if err != nil {
			return err
		}
		row, err := cur.One()
		if err != nil {
			return err
		}
		total = row[0].(int64)
		return nil
	})
	return []byte(strconv.FormatInt(total, 10)), err
}

func init() { builtinKinds = append(builtinKinds, host.Kind{Name: "testc", Handler: counterHandler}) }

func TestReach_ToolLeasePathIsDurableAndReleases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := &globals{Bucket: "file://" + dir}
	s, err := g.openStore()
	if err != nil {
		t.Fatal(err)
	}
	for round, want := range []string{"3", "6"} {
		c, done, err := g.cellCaller(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for range 3 {
			if got, err = c.Call(ctx, "testc:one", []byte("1")); err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != want {
			t.Fatalf("round %d: total %s, want %s", round, got, want)
		}
		// While held, the record names the tool's live lease.
		ci, err := fleet.LookupCell(ctx, s, "testc:one", time.Now().UnixMilli())
		if err != nil || !ci.OwnerLive || ci.Own.Epoch != uint64(round+1) {
			t.Fatalf("while held: %+v %v", ci, err)
		}
		if err := done(ctx); err != nil {
			t.Fatal(err)
		}
		ci, err = fleet.LookupCell(ctx, s, "testc:one", time.Now().UnixMilli())
		if err != nil || !ci.Own.Released || ci.OwnerLive {
			t.Fatalf("after done: %+v %v", ci, err)
		}
		leases, err := fleet.ListLeases(ctx, s)
		if err != nil || len(leases) != 0 {
			t.Fatalf("tool lease left behind: %+v %v", leases, err)
		}
	}
}

func TestReach_HandlerErrorIsARequestError(t *testing.T) {
	ctx := context.Background()
	g := &globals{Bucket: "file://" + t.TempDir()}
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done(ctx)
	_, err = c.Call(ctx, "testc:x", []byte("fail"))
	var re *RequestError
	if !errors.As(err, &re) || re.Message != "refused on purpose" {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Call(ctx, "nokind:x", nil); err == nil {
		t.Fatal("an unknown cell kind was accepted")
	}
}

func TestReach_UnreachableLiveOwnerIsNamed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.EnsureFormat(ctx, s); err != nil {
		t.Fatal(err)
	}
	// A live node whose advertised address refuses connections owns it.
	n, err := fleet.Start(ctx, s, fleet.Config{Node: "far", Advertise: "127.0.0.1:1", Kind: core.KindNode, TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(ctx)
	if _, err := n.Acquire(ctx, "testc:held"); err != nil {
		t.Fatal(err)
	}
	g := &globals{Bucket: "file://" + dir}
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done(ctx)
	_, err = c.Call(ctx, "testc:held", []byte("1"))
	var ue *UnreachableOwnerError
	if !errors.As(err, &ue) || ue.Node != "far" || ue.Advertise != "127.0.0.1:1" {
		t.Fatalf("err = %v", err)
	}
	// Nothing was taken over: the live owner still owns it.
	ci, _ := fleet.LookupCell(ctx, s, "testc:held", time.Now().UnixMilli())
	if ci.Own.Node != "far" || ci.Own.Epoch != 1 {
		t.Fatalf("ownership changed: %+v", ci)
	}
}

// startTestNode runs a node in-process on the file bucket at dir, hosting
// the test cell kind.
func startTestNode(t *testing.T, dir, name string) (internal string, stop func()) {
	t.Helper()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- server.Run(ctx, server.Options{
			Store: s, Node: name, Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0", TTL: 5 * time.Second,
			Logger: slog.New(slog.DiscardHandler), StateDir: t.TempDir(),
			Builtins: append(server.DefaultBuiltins(), host.Kind{Name: "testc", Handler: counterHandler}),
			OnReady:  func(_, internal string) { ready <- internal },
		})
	}()
	select {
	case internal = <-ready:
	case err := <-errc:
		t.Fatalf("node %s: %v", name, err)
	}
	return internal, func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("node %s: %v", name, err)
		}
	}
}

func TestReach_LiveOwnerServesOverPeerHTTP(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, stop := startTestNode(t, dir, "n1")
	g := &globals{Bucket: "file://" + dir}
	s, _ := g.openStore()

	// The command takes the cell first (tool lease), then lets it go.
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Call(ctx, "testc:p", []byte("5")); err != nil || string(got) != "5" {
		t.Fatalf("tool path: %s %v", got, err)
	}
	if err := done(ctx); err != nil {
		t.Fatal(err)
	}
	// A peer of the node (here: a forwarded call through the node's own
	// route, as a second node would send it) activates it on the node.
	c2, done2, _ := g.cellCaller(ctx)
	ci, _ := fleet.LookupCell(ctx, s, "testc:p", time.Now().UnixMilli())
	if ci.OwnerLive {
		t.Fatalf("still owned after done: %+v", ci)
	}
	// Make the node own it: the node's Caller is reached through a peer
	// request the command sends once the node holds it. Acquire it on the
	// node by sending the first request over its peer route directly.
	node := ""
	leases, _ := fleet.ListLeases(ctx, s)
	for _, l := range leases {
		if l.Lease.Node == "n1" {
			node = l.Lease.Advertise
		}
	}
	r := c2.(*reach)
	if out, _, err := r.remote(ctx, "testc:p", "n1", node, []byte("1")); err != nil || string(out) != "6" {
		t.Fatalf("peer route: %s %v", out, err)
	}
	ci, _ = fleet.LookupCell(ctx, s, "testc:p", time.Now().UnixMilli())
	if !ci.OwnerLive || ci.Own.Node != "n1" || ci.Own.Epoch != 2 {
		t.Fatalf("node does not own it at epoch 2: %+v", ci)
	}
	// Now the command finds the live owner and goes over peer HTTP: the
	// node answers, and the command acquires nothing.
	if got, err := c2.Call(ctx, "testc:p", []byte("4")); err != nil || string(got) != "10" {
		t.Fatalf("peer path: %s %v", got, err)
	}
	if r.tool != nil {
		t.Fatal("the command took a tool lease although a live node owns the cell")
	}
	if _, err := c2.Call(ctx, "testc:p", []byte("fail")); err == nil || err.Error() != "refused on purpose" {
		t.Fatalf("handler error over peer HTTP: %v", err)
	}
	done2(ctx)
	stop()
	// The node released it at shutdown, with everything durable.
	c3, done3, _ := g.cellCaller(ctx)
	defer done3(ctx)
	if got, err := c3.Call(ctx, "testc:p", []byte("0")); err != nil || string(got) != "10" {
		t.Fatalf("after the node stopped: %s %v", got, err)
	}
}

// blackhole accepts connections and never answers (an owner frozen with
// its socket open, as under SIGSTOP); it counts what it accepted.
func blackhole(t *testing.T) (addr string, accepted func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return len(conns) }
}

// TestReach_FrozenOwnerGivesUpWithItsLease: a command whose call a frozen
// owner holds (accepted, never answered, lease no longer renewed) gives up
// when that lease expires and takes the cell over as usual: the tool
// lease watches the owner's lease from the command's first read of it,
// for the owner's own TTL (3 s here, the tool's is 10 s), so the command
// finishes about a TTL after it started — not at the expiry plus the 5 s
// skew margin, nor at a minutes-long HTTP timeout.
func TestReach_FrozenOwnerGivesUpWithItsLease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.EnsureFormat(ctx, s); err != nil {
		t.Fatal(err)
	}
	addr, accepted := blackhole(t)
	n, err := fleet.Start(ctx, s, fleet.Config{Node: "frozen", Advertise: addr, Kind: core.KindNode, TTL: 3 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Acquire(ctx, "testc:frozen"); err != nil {
		t.Fatal(err)
	}
	n.Abandon() // frozen: the lease stays, unrenewed
	g := &globals{Bucket: "file://" + dir}
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done(ctx)
	start := time.Now()
	got, err := c.Call(ctx, "testc:frozen", []byte("7"))
	took := time.Since(start)
	if err != nil || string(got) != "7" {
		t.Fatalf("call to a frozen owner: %q %v (after %v)", got, err, took)
	}
	if accepted() == 0 {
		t.Fatal("the call never reached the frozen owner: the test did not exercise the lease-bound wait")
	}
	if took > 4500*time.Millisecond {
		t.Fatalf("call took %v, want within the owner's 3 s TTL plus 1.5 s (the expiry plus the 5 s margin would be 8 s)", took)
	}
	ci, _ := fleet.LookupCell(ctx, s, "testc:frozen", time.Now().UnixMilli())
	if ci.Own.Node == "frozen" || ci.Own.Epoch != 2 {
		t.Fatalf("not taken over at epoch 2: %+v", ci)
	}
	t.Logf("frozen owner (TTL 3 s): the command finished after %v", took.Round(time.Millisecond))
}

// TestReach_LiveSilentOwnerHitsTimeout: a live owner (lease renewed) that
// never answers is given up on at --timeout, named, and keeps its cell.
func TestReach_LiveSilentOwnerHitsTimeout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.EnsureFormat(ctx, s); err != nil {
		t.Fatal(err)
	}
	addr, _ := blackhole(t)
	n, err := fleet.Start(ctx, s, fleet.Config{Node: "silent", Advertise: addr, Kind: core.KindNode, TTL: 1500 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(ctx)
	if _, err := n.Acquire(ctx, "testc:silent"); err != nil {
		t.Fatal(err)
	}
	g := &globals{Bucket: "file://" + dir, Timeout: 2500 * time.Millisecond} // past one lease: renewals extend the wait
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done(ctx)
	start := time.Now()
	_, err = c.Call(ctx, "testc:silent", []byte("1"))
	took := time.Since(start)
	var ue *UnreachableOwnerError
	if !errors.As(err, &ue) || ue.Node != "silent" || !strings.Contains(err.Error(), "--timeout") {
		t.Fatalf("err = %v, want the owner named with --timeout", err)
	}
	if took < 2400*time.Millisecond || took > 5*time.Second {
		t.Fatalf("gave up after %v, want at the 2.5 s timeout", took)
	}
	ci, _ := fleet.LookupCell(ctx, s, "testc:silent", time.Now().UnixMilli())
	if ci.Own.Node != "silent" || ci.Own.Epoch != 1 {
		t.Fatalf("a live owner's cell changed hands: %+v", ci)
	}
}

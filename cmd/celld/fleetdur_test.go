package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
	"github.com/celldgo/celld/server/api"
)

var (
	fleetRounds = flag.Int("fleet.rounds", 1, "kill -9 rounds of TestFleetDurability_KillOwner (the issue's bar: 20)")
	fleetAll    = flag.Bool("fleet.all", false, "also run the longer fleet durability process tests (owner and follower, follower, frozen owner)")
)

// long skips a longer process test unless -fleet.all is given (each runs
// three nodes for half a minute or more).
func long(t *testing.T) {
	if !*fleetAll {
		t.Skip("a longer process test: run with -fleet.all")
	}
}

// fleetEnv runs a node in fleet durability with uploads (log packs and
// the cells' own) held back far longer than any test: an acknowledged
// write's only copies until the bucket has it are the followers' disks.
var fleetEnv = []string{"CELLD_DURABILITY=fleet", "CELLD_FLEET_UPLOAD_MS=600000", "CELLD_FLEET_TRANSFER_MS=600000", "CELLD_SKEW_MARGIN_MS=300", "CELLD_TTL_MS=3000",
	"CELLD_RECOVERY_RETRY_MS=200", "CELLD_RECOVERY_RETRIES=100"}

// packEnv writes log packs at once but holds the cells' own uploads back:
// an acknowledged write is soon only in a log pack (the followers drop it).
var packEnv = []string{"CELLD_DURABILITY=fleet", "CELLD_FLEET_UPLOAD_MS=50", "CELLD_FLEET_TRANSFER_MS=600000", "CELLD_SKEW_MARGIN_MS=300", "CELLD_TTL_MS=3000",
	"CELLD_RECOVERY_RETRY_MS=200", "CELLD_RECOVERY_RETRIES=100"}

type fleetCluster struct {
	t      *testing.T
	bin    string
	srv    *miniotest.Server
	bucket string
	dirs   map[string]string
	procs  map[string]*serveProc
	exited map[string]chan struct{}
	env    []string
}

func newFleetCluster(t *testing.T, nodes ...string) *fleetCluster {
	return newFleetClusterEnv(t, fleetEnv, nodes...)
}

func newFleetClusterEnv(t *testing.T, env []string, nodes ...string) *fleetCluster {
	t.Helper()
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	c := &fleetCluster{t: t, bin: bin, srv: srv, bucket: srv.NewBucket(t), dirs: map[string]string{}, procs: map[string]*serveProc{}, exited: map[string]chan struct{}{}, env: env}
	deploy := exec.Command(bin, "deploy", "../../examples/counter", "--bucket", "s3://"+c.bucket, "--endpoint", srv.Endpoint)
	deploy.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	if out, err := deploy.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	for _, n := range nodes {
		c.dirs[n] = filepath.Join(t.TempDir(), n)
		c.start(n)
	}
	return c
}

func (c *fleetCluster) start(node string) *serveProc {
	p := startServe(c.t, c.bin, c.srv, c.bucket, node, c.dirs[node], c.env...)
	c.procs[node] = p
	done := make(chan struct{})
	c.exited[node] = done
	go func() { p.wait(); close(done) }()
	return p
}

// supervise restarts a node that exited by itself (a self-fence: on a
// loaded machine a lease renewal can time out), as a supervisor would.
func (c *fleetCluster) supervise() {
	for n, done := range c.exited {
		select {
		case <-done:
			c.t.Logf("%s exited by itself (%s); restarting it", n, lastLine(c.procs[n].stderr.String()))
			c.start(n)
		default:
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func (c *fleetCluster) state(node string) (api.State, error) {
	var st api.State
	resp, err := http.Get(c.procs[node].internal + "/state")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// waitGroup waits until node's replication group has n followers, each
// on the disk that follower has now (a follower restarted without its
// state is a new member).
func (c *fleetCluster) waitGroup(node string, n int) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.state(node)
		good := 0
		for _, f := range st.Durability.Followers {
			if fs, err := c.state(f.Node); err == nil && fs.Durability.Disk == f.Disk {
				good++
			}
		}
		if err == nil && good >= n {
			return
		}
		c.supervise()
		if time.Now().After(deadline) {
			c.t.Fatalf("%s never had %d followers: %+v (%v)\n%s", node, n, st.Durability, err, c.procs[node].stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *fleetCluster) kill(node string, deleteState bool) {
	p := c.procs[node]
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited[node]
	delete(c.exited, node) // down on purpose: not the supervisor's to restart
	if deleteState {
		if err := os.RemoveAll(c.dirs[node]); err != nil {
			c.t.Fatal(err)
		}
	}
}

var shortClient = &http.Client{Timeout: 3 * time.Second}

// count increments counter name through node; ok is false on any error
// (a request to a frozen node gives up after 3 s).
func (c *fleetCluster) count(node, name string) (int, bool) {
	resp, err := shortClient.Get(c.procs[node].public + "/?name=" + name)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(body)))
	return v, err == nil
}

// settle reads counter name through node (/peek: no write, so a retry
// cannot add one) until it answers — a takeover and its recovery may take
// a few leases — and returns the count.
func (c *fleetCluster) settle(node, name string) int {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if resp, err := shortClient.Get(c.procs[node].public + "/peek?name=" + name); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if v, err := strconv.Atoi(strings.TrimSpace(string(body))); err == nil && resp.StatusCode == 200 {
				return v
			}
		}
		c.supervise()
		if time.Now().After(deadline) {
			c.t.Fatalf("%s never served %s again\n%s", node, name, c.procs[node].stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestFleetDurability_KillOwner: three nodes in fleet durability; the
// owner of a counter acknowledges a stream of writes (proven on its two
// followers' fsyncs, the bucket upload held back), is killed with SIGKILL
// and its state directory deleted; another node takes the counter over —
// through the recovery gate, from the followers' disks — and every
// acknowledged write is there. Each round restarts the killed node.
func TestFleetDurability_KillOwner(t *testing.T) {
	c := newFleetCluster(t, "a", "b", "c")
	order := []string{"a", "b", "c"}
	for round := 0; round < *fleetRounds; round++ {
		owner, next := order[round%3], order[(round+1)%3]
		name := fmt.Sprintf("kill-%d", round)
		c.waitGroup(owner, 2)
		acked := 0
		for i := 1; i <= 30; i++ {
			v, ok := c.count(owner, name)
			if !ok || v != i {
				t.Fatalf("round %d: write %d on %s: got %d (ok %v)\n%s", round, i, owner, v, ok, c.procs[owner].stderr)
			}
			acked = v
		}
		st, err := c.state(owner)
		if err != nil || st.Durability.FleetAcked == 0 || st.Durability.LogRecord != "open" {
			t.Fatalf("round %d: %s acknowledged without fleet proofs: %+v (%v)", round, owner, st.Durability, err)
		}
		c.kill(owner, true)
		v := c.settle(next, name)
		if v != acked {
			t.Fatalf("round %d: after the takeover the count is %d, want %d: an acknowledged write was lost", round, v, acked)
		}
		c.start(owner)
		t.Logf("round %d: %s killed after %d writes (%d segments proven on followers); %s restored %d", round, owner, acked, st.Durability.FleetAcked, next, v)
	}
}

// TestFleetDurability_KillOwnerPacks: the acknowledged writes are in the
// owner's log packs only (the followers dropped them once a pack held
// them; the counter's own upload is held back): killed with SIGKILL and
// its state deleted, the owner's successor's recovery gate reads the
// packs, and every acknowledged write is there. -fleet.rounds as for
// TestFleetDurability_KillOwner.
func TestFleetDurability_KillOwnerPacks(t *testing.T) {
	c := newFleetClusterEnv(t, packEnv, "a", "b", "c")
	order := []string{"a", "b", "c"}
	for round := 0; round < *fleetRounds; round++ {
		owner, next := order[round%3], order[(round+1)%3]
		name := fmt.Sprintf("packed-%d", round)
		c.waitGroup(owner, 2)
		acked := 0
		for i := 1; i <= 30; i++ {
			v, ok := c.count(owner, name)
			if !ok || v != i {
				t.Fatalf("round %d: write %d on %s: got %d (ok %v)\n%s", round, i, owner, v, ok, c.procs[owner].stderr)
			}
			acked = v
		}
		// Wait until the followers hold nothing of the owner's session:
		// the packs do.
		deadline := time.Now().Add(30 * time.Second)
		var st api.State
		for {
			var err error
			st, err = c.state(owner)
			held := int64(0)
			for _, f := range st.Durability.Followers {
				fs, ferr := c.state(f.Node)
				if ferr != nil {
					held = -1
					break
				}
				held += fs.Durability.FollowerRetainedBytes
			}
			if err == nil && st.Durability.Packs > 0 && st.Durability.LivePacks > 0 && held == 0 && st.Durability.RetainedBytes == 0 {
				break
			}
			c.supervise()
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the followers never dropped the session's segments for packs: owner %+v, followers hold %d bytes", round, st.Durability, held)
			}
			time.Sleep(100 * time.Millisecond)
		}
		recovered := int64(0)
		if ns, err := c.state(next); err == nil {
			recovered = ns.Durability.Recovered
		}
		c.kill(owner, true)
		v := c.settle(next, name)
		if v != acked {
			t.Fatalf("round %d: after the takeover the count is %d, want %d: a write acknowledged into a log pack was lost", round, v, acked)
		}
		if ns, err := c.state(next); err != nil || ns.Durability.Recovered <= recovered {
			t.Fatalf("round %d: %s restored the counter without recovering %s's session: %+v (%v)", round, next, owner, ns.Durability, err)
		}
		c.start(owner)
		t.Logf("round %d: %s killed after %d writes in %d log packs (%d live); %s restored %d", round, owner, acked, st.Durability.Packs, st.Durability.LivePacks, next, v)
	}
}

// TestFleetDurability_KillOwnerAndFollower: the owner and one of its two
// followers die together (the owner's state deleted); the remaining
// follower's disk recovers the tail.
func TestFleetDurability_KillOwnerAndFollower(t *testing.T) {
	long(t)
	c := newFleetCluster(t, "a", "b", "c")
	c.waitGroup("a", 2)
	acked := 0
	for i := 1; i <= 30; i++ {
		v, ok := c.count("a", "pair")
		if !ok || v != i {
			t.Fatalf("write %d: got %d (ok %v)\n%s", i, v, ok, c.procs["a"].stderr)
		}
		acked = v
	}
	c.kill("a", true)
	c.kill("b", true)
	v := c.settle("c", "pair")
	if v != acked {
		t.Fatalf("after owner and follower died the count is %d, want %d", v, acked)
	}
	st, _ := c.state("c")
	t.Logf("c recovered %d session(s) and restored %d", st.Durability.Recovered, v)
}

// TestFleetDurability_KillFollower: a follower dies mid-stream; the owner
// keeps acknowledging (on the remaining follower, then on a new one).
func TestFleetDurability_KillFollower(t *testing.T) {
	long(t)
	c := newFleetCluster(t, "a", "b", "c")
	c.waitGroup("a", 2)
	for i := 1; i <= 10; i++ {
		if v, ok := c.count("a", "f"); !ok || v != i {
			t.Fatalf("write %d: got %d (ok %v)", i, v, ok)
		}
	}
	c.kill("b", false)
	start := time.Now()
	for i := 11; i <= 40; i++ {
		if v, ok := c.count("a", "f"); !ok || v != i {
			t.Fatalf("write %d after a follower died: got %d (ok %v)\n%s", i, v, ok, c.procs["a"].stderr)
		}
	}
	st, _ := c.state("a")
	if len(st.Durability.Followers) < 1 || st.Durability.LogRecord != "open" {
		t.Fatalf("owner's group after a follower died: %+v", st.Durability)
	}
	t.Logf("30 writes acknowledged in %v after a follower died; group now %+v", time.Since(start).Round(time.Millisecond), st.Durability.Followers)
}

// TestFleetDurability_FrozenOwner: the owner is frozen (SIGSTOP) past its
// lease; another node takes the counter over and continues; when the old
// owner wakes, nothing it acknowledges contradicts that: the counter never
// goes back, and no write acknowledged anywhere is lost.
func TestFleetDurability_FrozenOwner(t *testing.T) {
	long(t)
	c := newFleetCluster(t, "a", "b", "c")
	c.waitGroup("a", 2)
	for i := 1; i <= 10; i++ {
		if v, ok := c.count("a", "z"); !ok || v != i {
			t.Fatalf("write %d: got %d (ok %v)", i, v, ok)
		}
	}
	a := c.procs["a"]
	a.cmd.Process.Signal(syscall.SIGSTOP)
	// A request to the frozen owner hangs; it must not be acknowledged
	// with a stale value later.
	stale := make(chan int, 1)
	go func() {
		v := -1
		if resp, err := http.Get(a.public + "/?name=z"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if n, err := strconv.Atoi(strings.TrimSpace(string(body))); err == nil && resp.StatusCode == 200 {
				v = n
			}
		}
		stale <- v
	}()
	v := c.settle("b", "z")
	if v < 10 {
		t.Fatalf("after the takeover the count is %d, want at least 10: an acknowledged write was lost", v)
	}
	for i := 0; i < 5; i++ {
		if w, ok := c.count("b", "z"); !ok || w != v+1+i {
			t.Fatalf("write after takeover: got %d (ok %v), want %d", w, ok, v+1+i)
		}
	}
	a.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case got := <-stale:
		// One write in flight when it froze: an answer from the old owner
		// may only be 11, and only if b restored it — never a value past
		// what b served.
		if got != -1 && got != 11 {
			t.Fatalf("the frozen owner answered %d after waking: a stale acknowledgement", got)
		}
		if got == 11 && v < 11 {
			t.Fatalf("the old owner acknowledged 11, but b restored %d: that write was lost", v)
		}
		t.Logf("frozen owner's request answered %d; b continued at %d", got, v)
	case <-time.After(30 * time.Second):
		t.Fatal("the woken owner never answered its pending request")
	}
	if w, ok := c.count("b", "z"); !ok || w != v+6 {
		t.Fatalf("final count %d (ok %v), want %d", w, ok, v+6)
	}
}

// TestFleetDurability_MixedModesRefused: a node started in bucket mode
// beside a live fleet-mode node exits with status 2, naming both modes (a
// node of the default mode, fleet, beside a bucket-mode one is refused by
// the same check: server.TestCheckModes).
func TestFleetDurability_MixedModesRefused(t *testing.T) {
	c := newFleetCluster(t, "a")
	for _, tc := range []struct{ mode, live string }{{"bucket", "fleet"}} {
		cmd := exec.Command(c.bin, "serve", "--bucket", "s3://"+c.bucket, "--endpoint", c.srv.Endpoint,
			"--node", "m", "--listen", freePort(t), "--internal-listen", freePort(t))
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+c.srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+c.srv.SecretKey,
			"CELLD_TTL_MS=3000", "CELLD_WATCH="+filepath.Join(t.TempDir(), "m"), "CELLD_DURABILITY="+tc.mode)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("CELLD_DURABILITY=%q beside a live %s node kept running\n%s", tc.mode, tc.live, out)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("CELLD_DURABILITY=%q beside a live %s node: %v, want exit 2\n%s", tc.mode, tc.live, err, out)
		}
		for _, want := range []string{"CELLD_DURABILITY=bucket", "CELLD_DURABILITY=fleet", "node a"} {
			if !strings.Contains(string(out), want) {
				t.Fatalf("CELLD_DURABILITY=%q: the refusal does not name %q:\n%s", tc.mode, want, out)
			}
		}
	}
	if _, err := c.state("a"); err != nil {
		t.Fatalf("the fleet-mode node suffered from the refused start: %v", err)
	}
}

// TestFleetDurability_DrainSeals: an owner drained with SIGTERM releases
// its counter (flushed to the bucket), seals its node log record and has
// its followers forget the session: the next owner needs no recovery and
// finds every acknowledged write, and no follower keeps the tail.
func TestFleetDurability_DrainSeals(t *testing.T) {
	c := newFleetClusterEnv(t, packEnv, "a", "b", "c")
	c.waitGroup("a", 2)
	acked := 0
	for i := 1; i <= 20; i++ {
		v, ok := c.count("a", "drained")
		if !ok || v != i {
			t.Fatalf("write %d: got %d (ok %v)\n%s", i, v, ok, c.procs["a"].stderr)
		}
		acked = v
	}
	c.procs["a"].cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited["a"]:
	case <-time.After(60 * time.Second):
		t.Fatalf("a did not exit after its drain\n%s", c.procs["a"].stderr)
	}
	delete(c.exited, "a")
	if !strings.Contains(c.procs["a"].stderr.String(), "node log record sealed on drain") {
		t.Fatalf("a's drain did not seal its node log record:\n%s", c.procs["a"].stderr)
	}
	if v := c.settle("b", "drained"); v != acked {
		t.Fatalf("after the drain the count is %d, want %d", v, acked)
	}
	for _, n := range []string{"b", "c"} {
		st, err := c.state(n)
		if err != nil {
			t.Fatal(err)
		}
		if st.Durability.Recovered != 0 {
			t.Fatalf("%s ran a recovery after a clean drain: %+v", n, st.Durability)
		}
		if st.Durability.FollowerRetainedBytes != 0 {
			t.Fatalf("%s still retains %d bytes after the drained session was sealed", n, st.Durability.FollowerRetainedBytes)
		}
	}
}

// TestFleetDurability_PreserveResumesGroup: after a preserve drain the
// restarted owner resumes its session with the same node log record and
// replication group, and acknowledges on fleet proofs again at once.
func TestFleetDurability_PreserveResumesGroup(t *testing.T) {
	c := newFleetClusterEnv(t, packEnv, "a", "b", "c")
	c.waitGroup("a", 2)
	for i := 1; i <= 5; i++ {
		if v, ok := c.count("a", "kept"); !ok || v != i {
			t.Fatalf("write %d: got %d (ok %v)", i, v, ok)
		}
	}
	before, err := c.state("a")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(c.procs["a"].internal+"/shutdown?handoff=preserve", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-c.exited["a"]:
	case <-time.After(60 * time.Second):
		t.Fatalf("a did not exit after its preserve drain\n%s", c.procs["a"].stderr)
	}
	c.start("a")
	for i := 6; i <= 10; i++ {
		if v, ok := c.count("a", "kept"); !ok || v != i {
			t.Fatalf("write %d after the restart: got %d (ok %v)\n%s", i, v, ok, c.procs["a"].stderr)
		}
	}
	after, err := c.state("a")
	if err != nil {
		t.Fatal(err)
	}
	d := after.Durability
	if after.Session != before.Session || d.LogRecord != "open" || len(d.Followers) != 2 || d.FleetAcked == 0 {
		t.Fatalf("after the preserve drain: session %s (was %s), durability %+v", after.Session, before.Session, d)
	}
}

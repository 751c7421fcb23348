package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

// TestQueue_DeliveredAfterOwnerKill9: producers send 10,000 numbered
// messages through two nodes; midway the queue's owner is killed with
// SIGKILL and its state directory deleted. Every message whose send()
// resolved must reach the consumer at least once; how many arrived twice
// is reported.
func TestQueue_DeliveredAfterOwnerKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	deployCmd := exec.Command(bin, "deploy", "testdata/queuefleet", "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	deployCmd.Env = env
	if out, err := deployCmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	lease := "CELLD_QUEUE_LEASE_MS=3000"
	// The survivor must not lose its own lease: with fleetTTL's 2 s a
	// node's lease writes time out after 667 ms, which a loaded CI
	// machine's MinIO can take, and a fenced survivor fails the test with
	// nothing to deliver the queue. 6 s gives its writes 2 s.
	ttl := "CELLD_TTL_MS=6000"
	nodes := []*fleetNode{
		startFleetNode(t, bin, srv, bucketName, "node-a", filepath.Join(tmp, "a"), lease, ttl),
		startFleetNode(t, bin, srv, bucketName, "node-b", filepath.Join(tmp, "b"), lease, ttl),
	}
	const total, chunk, clients = 10000, 50, 8
	var killed atomic.Int32 // index+1 of the killed node
	var mu sync.Mutex
	resolved := map[int]bool{}
	var next, done atomic.Int64
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(node *fleetNode, from int) ([]int, error) {
		resp, err := client.Get(fmt.Sprintf("%s/send?from=%d&n=%d", node.public, from, chunk))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %s", node.name, resp.Status)
		}
		var seqs []int
		return seqs, json.NewDecoder(resp.Body).Decode(&seqs)
	}
	start := time.Now()
	killOwner := func() {
		for try := 0; try < 50; try++ {
			for i, n := range nodes {
				owned, err := n.owned()
				if err == nil && owned["queue:jobs"].Cell != "" {
					t.Logf("killing %s, the owner of queue:jobs, after %d sends resolved in %v", n.name, done.Load(), time.Since(start))
					killed.Store(int32(i + 1))
					n.cmd.Process.Kill()
					<-n.done
					os.RemoveAll(n.stateDir)
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Error("no node owns queue:jobs")
	}
	var wg sync.WaitGroup
	var killOnce sync.Once
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := int(next.Add(chunk)) - chunk
				if from >= total {
					return
				}
				for attempt := 0; ; attempt++ {
					i := (from / chunk) % 2
					if k := int(killed.Load()); k == i+1 {
						i = 1 - i
					}
					seqs, err := send(nodes[i], from)
					if err == nil && len(seqs) > 0 {
						mu.Lock()
						for _, s := range seqs {
							resolved[s] = true
						}
						mu.Unlock()
						if len(seqs) == chunk {
							break
						}
					}
					if attempt > 100 || time.Since(start) > 45*time.Second {
						t.Errorf("chunk %d never fully sent: %v", from, err)
						return
					}
					time.Sleep(200 * time.Millisecond)
				}
				if done.Add(chunk) >= total/2 {
					killOnce.Do(killOwner)
				}
			}
		}()
	}
	wg.Wait()
	sendTime := time.Since(start)
	mu.Lock()
	n := len(resolved)
	mu.Unlock()
	t.Logf("%d sends resolved in %v (%.0f msgs/s through two nodes, one killed midway)", n, sendTime, float64(n)/sendTime.Seconds())

	if killed.Load() == 0 {
		t.Fatal("the queue's owner was never killed")
	}
	survivor := nodes[2-int(killed.Load())]
	deadline := time.Now().Add(40 * time.Second)
	for {
		resp, err := client.Get(survivor.public + "/seen")
		var seen []int
		if err == nil {
			if resp.StatusCode == 200 {
				err = json.NewDecoder(resp.Body).Decode(&seen)
			}
			resp.Body.Close()
		}
		count := map[int]int{}
		for _, s := range seen {
			count[s]++
		}
		missing, twice := 0, 0
		for s := range resolved {
			if count[s] == 0 {
				missing++
			}
		}
		for _, c := range count {
			if c > 1 {
				twice++
			}
		}
		if missing == 0 {
			t.Logf("every one of %d resolved sends was delivered (%d deliveries; %d messages delivered more than once) %v after the last send",
				n, len(seen), twice, time.Since(start)-sendTime)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d resolved sends never delivered (%d deliveries seen, err %v)\n%s", missing, n, len(seen), err, survivor.stderr)
		}
		time.Sleep(time.Second)
	}
}

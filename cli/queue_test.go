package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/queue"
)

// withQueueClient runs fn on a queue reached the way a command does (no
// fleet running: under a tool lease), and releases the lease after.
func withQueueClient(t testing.TB, dir, name string, fn func(*queue.Client) error) {
	t.Helper()
	g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
	c, done, err := g.cellCaller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ferr := fn(queue.NewClient(c, name))
	if err := done(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
}

func queueInfo(t *testing.T, dir, name string) queue.Info {
	t.Helper()
	out, _, err := runKV(t, dir, "queue", "info", name, "--json")
	if err != nil {
		t.Fatalf("queue info: %v", err)
	}
	var in queue.Info
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("queue info --json: %v: %q", err, out)
	}
	return in
}

func TestQueueCommands_WithoutFleet(t *testing.T) {
	dir := newKVDir(t)
	ctx := context.Background()
	withQueueClient(t, dir, "jobs", func(c *queue.Client) error {
		_, err := c.Send(ctx, []queue.Message{
			{Body: []byte(`{"n":1}`), ContentType: "json"},
			{Body: []byte("two"), ContentType: "text"},
			{Body: []byte{3}, ContentType: "bytes"},
		})
		return err
	})
	// Two messages dead-lettered from "jobs".
	withQueueClient(t, dir, "jobs-dlq", func(c *queue.Client) error {
		_, err := c.Send(ctx, []queue.Message{
			{ID: "aaaa", Body: []byte("d1"), ContentType: "text", Source: "jobs"},
			{ID: "bbbb", Body: []byte("d2"), ContentType: "text", Source: "jobs"},
		})
		return err
	})

	if in := queueInfo(t, dir, "jobs"); in.Messages != 3 || in.Ready != 3 || in.Paused || in.Queue != "jobs" {
		t.Errorf("info: %+v, want 3 ready messages, delivery not paused", in)
	}
	out, _, err := runKV(t, dir, "queue", "peek", "jobs", "--limit", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []peekRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("peek: %v: %q", err, out)
	}
	if len(rows) != 2 || rows[0].Body != base64.StdEncoding.EncodeToString([]byte(`{"n":1}`)) || rows[1].ContentType != "text" || len(rows[0].ID) != 32 {
		t.Errorf("peek --limit 2: %+v", rows)
	}
	if _, _, err := runKV(t, dir, "queue", "peek", "jobs", "--limit", "101"); err == nil || !strings.Contains(err.Error(), "--limit must be between 1 and 100") {
		t.Errorf("peek --limit 101: %v", err)
	}

	_, errOut, err := runKV(t, dir, "queue", "pause-delivery", "jobs")
	if err != nil || !strings.Contains(errOut, "Paused message delivery for queue jobs.") {
		t.Fatalf("pause-delivery: %v %q", err, errOut)
	}
	if !queueInfo(t, dir, "jobs").Paused {
		t.Error("pause-delivery did not pause")
	}
	if _, _, err := runKV(t, dir, "queue", "resume", "jobs"); err != nil {
		t.Fatal(err)
	}
	if queueInfo(t, dir, "jobs").Paused {
		t.Error("resume (alias of resume-delivery) did not resume")
	}

	moved, errOut, err := runKV(t, dir, "queue", "redrive", "jobs-dlq")
	if err != nil || !strings.Contains(errOut, "Redrove 2 message(s) from queue jobs-dlq.") {
		t.Fatalf("redrive: %v %q %q", err, moved, errOut)
	}
	if in := queueInfo(t, dir, "jobs"); in.Messages != 5 {
		t.Errorf("after redrive jobs holds %d messages, want 5", in.Messages)
	}
	if in := queueInfo(t, dir, "jobs-dlq"); in.Messages != 0 {
		t.Errorf("after redrive the dead-letter queue holds %d messages, want 0", in.Messages)
	}

	if _, _, err := runKV(t, dir, "queue", "purge", "jobs"); err == nil || err.Error() != "celld queue purge permanently removes messages; repeat with --force" {
		t.Errorf("purge without --force and no terminal: %v", err)
	}
	if in := queueInfo(t, dir, "jobs"); in.Messages != 5 {
		t.Errorf("a refused purge removed messages: %d left", in.Messages)
	}
	if _, errOut, err := runKV(t, dir, "queue", "purge", "jobs", "--force"); err != nil || !strings.Contains(errOut, "Purged Queue 'jobs'") {
		t.Fatalf("purge --force: %v %q", err, errOut)
	}
	if in := queueInfo(t, dir, "jobs"); in.Messages != 0 {
		t.Errorf("after purge: %d messages", in.Messages)
	}

	out, _, err = runKV(t, dir, "queue", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list []queueRow
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || list[0].Name != "jobs" || list[1].Name != "jobs-dlq" {
		t.Errorf("list --json: %v %q", err, out)
	}
	if _, _, err := runKV(t, dir, "queue", "info", "a/b"); err == nil || !strings.Contains(err.Error(), "invalid queue name") {
		t.Errorf("info a/b: %v", err)
	}
	if _, _, err := runKV(t, dir, "queue", "info", "jobs", "--remote"); err == nil || !strings.Contains(err.Error(), "a queue name addresses one queue in one fleet") {
		t.Errorf("info --remote: %v", err)
	}
}

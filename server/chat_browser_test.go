package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/gorilla/websocket"
)

// cdp is a minimal Chrome DevTools Protocol client over the browser's
// WebSocket: commands with ids, answers matched to them.
type cdp struct {
	c      *websocket.Conn
	mu     sync.Mutex
	next   int
	wait   map[int]chan cdpAnswer
	closed chan struct{}
}

type cdpAnswer struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func newCDP(c *websocket.Conn) *cdp {
	d := &cdp{c: c, wait: map[int]chan cdpAnswer{}, closed: make(chan struct{})}
	go func() {
		defer close(d.closed)
		for {
			var a cdpAnswer
			if err := c.ReadJSON(&a); err != nil {
				return
			}
			d.mu.Lock()
			ch := d.wait[a.ID]
			delete(d.wait, a.ID)
			d.mu.Unlock()
			if ch != nil {
				ch <- a
			}
		}
	}()
	return d
}

func (d *cdp) call(ctx context.Context, session, method string, params any, out any) error {
	d.mu.Lock()
	d.next++
	id := d.next
	ch := make(chan cdpAnswer, 1)
	d.wait[id] = ch
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	err := d.c.WriteJSON(msg)
	d.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			return fmt.Errorf("%s: %s", method, a.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(a.Result, out)
		}
		return nil
	case <-d.closed:
		return fmt.Errorf("%s: the browser went away", method)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// eval evaluates expr in a tab and returns its value as a string.
func (d *cdp) eval(ctx context.Context, session, expr string) (string, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	if err := d.call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return "", err
	}
	if r.ExceptionDetails != nil {
		return "", fmt.Errorf("evaluate %s: %v", expr, r.ExceptionDetails)
	}
	return fmt.Sprint(r.Result.Value), nil
}

// waitFor evaluates expr in a tab until it returns a value containing
// want.
func (d *cdp) waitFor(ctx context.Context, t *testing.T, session, expr, want string) {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		v, err := d.eval(ctx, session, expr)
		if err == nil && strings.Contains(v, want) {
			return
		}
		last = v
		if err != nil {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("waiting for %q in %s: last %q", want, expr, last)
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestChat_TwoTabsInABrowser: examples/chat in headless Chromium — two
// tabs join one room, each sees the other among the members, a message
// typed in one appears in the other, and the history keeps it.
func TestChat_TwoTabsInABrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium; .ci/run installs it): the chat page's browser test cannot run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(ctx, store, "../examples/chat", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, store, "chat")

	cmd := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+t.TempDir(), "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	endpoint := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				endpoint <- m[1]
			}
		}
	}()
	var wsEndpoint string
	select {
	case wsEndpoint = <-endpoint:
	case <-ctx.Done():
		t.Fatal("chromium did not start its DevTools endpoint")
	}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, wsEndpoint, nil)
	if err != nil {
		t.Fatalf("connect to chromium: %v", err)
	}
	defer conn.Close()
	d := newCDP(conn)

	room := "e2e"
	open := func(name string) string {
		t.Helper()
		u := n.public + "/?" + url.Values{"room": {room}, "name": {name}}.Encode()
		var target struct {
			TargetID string `json:"targetId"`
		}
		if err := d.call(ctx, "", "Target.createTarget", map[string]any{"url": u}, &target); err != nil {
			t.Fatal(err)
		}
		var att struct {
			SessionID string `json:"sessionId"`
		}
		if err := d.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
			t.Fatal(err)
		}
		return att.SessionID
	}
	alice := open("alice")
	bob := open("bob")
	members := `document.body.dataset.ready === "1" ? document.getElementById("members").textContent : ""`
	d.waitFor(ctx, t, alice, members, "alice, bob")
	d.waitFor(ctx, t, bob, members, "alice, bob")

	if _, err := d.eval(ctx, alice, `document.getElementById("text").value = "hello from alice"; document.getElementById("send").click(); true`); err != nil {
		t.Fatal(err)
	}
	messages := `Array.from(document.querySelectorAll("#messages li"), (li) => li.textContent).join("|")`
	d.waitFor(ctx, t, bob, messages, "alicehello from alice")
	d.waitFor(ctx, t, alice, messages, "alicehello from alice")

	status, body := fetchText(t, n.public+"/room/"+room+"/history")
	if status != 200 || !strings.Contains(body, `"name":"alice","text":"hello from alice"`) {
		t.Fatalf("history: %d %s", status, body)
	}
}

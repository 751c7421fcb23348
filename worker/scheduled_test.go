package worker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

func scheduled(t *testing.T, rt *worker.Runtime, cron string, at int64) worker.ScheduledResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := rt.Scheduled(ctx, cron, at)
	if err != nil {
		t.Fatalf("Scheduled(%q): %v", cron, err)
	}
	return res
}

// TestRuntime_Scheduled: the controller is shaped as workerd's (own
// read-only cron and scheduledTime, noRetry on the prototype, no global
// class), the event waits for ctx.waitUntil, and a throw, a rejected
// waitUntil or a missing handler is the outcome "exception" — as recorded
// on workerd through Miniflare's /cdn-cgi/handler/scheduled.
func TestRuntime_Scheduled(t *testing.T) {
	rt := newRuntime(t, `"use strict";
let seen = [];
module.exports.default = {
  async fetch() { return Response.json(seen); },
  async scheduled(controller, env, ctx) {
    const d = { cron: controller.cron, scheduledTime: controller.scheduledTime, keys: Object.keys(controller),
      proto: Object.getOwnPropertyNames(Object.getPrototypeOf(controller)), ctor: controller.constructor.name,
      global: typeof ScheduledController, nargs: arguments.length, env: typeof env };
    try { controller.cron = "x"; } catch (e) { d.assign = e.constructor.name; }
    seen.push(d);
    if (controller.cron === "throw") throw new Error("boom");
    if (controller.cron === "noretry") { controller.noRetry(); throw new Error("no retry"); }
    if (controller.cron === "wait") ctx.waitUntil(new Promise(r => setTimeout(() => { seen.push("waited"); r(); }, 50)));
    if (controller.cron === "reject") ctx.waitUntil(Promise.reject(new TypeError("late")));
  }
};`, worker.Config{Isolates: 1})
	if res := scheduled(t, rt, "* * * * *", 1700000000123); res.Outcome != "ok" || res.NoRetry || res.Err != nil {
		t.Fatalf("ok run = %+v", res)
	}
	if res := scheduled(t, rt, "throw", 1); res.Outcome != "exception" || res.Err == nil || res.Err.Message != "boom" || res.NoRetry {
		t.Fatalf("throw = %+v", res)
	}
	if res := scheduled(t, rt, "noretry", 1); res.Outcome != "exception" || !res.NoRetry {
		t.Fatalf("noRetry = %+v", res)
	}
	if res := scheduled(t, rt, "wait", 1); res.Outcome != "ok" {
		t.Fatalf("wait = %+v", res)
	}
	if res := scheduled(t, rt, "reject", 1); res.Outcome != "exception" || res.Err == nil || res.Err.Name != "TypeError" {
		t.Fatalf("rejected waitUntil = %+v", res)
	}
	var seen []any
	if err := json.Unmarshal(fetch(t, rt, "GET", "/", nil).Body, &seen); err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(seen[0])
	// (workerd lists the prototype as noRetry, constructor: a C++ class)
	want := `{"assign":"TypeError","cron":"* * * * *","ctor":"ScheduledController","env":"object","global":"undefined","keys":["cron","scheduledTime"],"nargs":3,"proto":["constructor","noRetry"],"scheduledTime":1700000000123}`
	if string(first) != want {
		t.Errorf("controller = %s\nwant         %s", first, want)
	}
	if len(seen) != 6 || seen[4] != "waited" {
		t.Errorf("the event did not wait for ctx.waitUntil: %v", seen)
	}
}

func TestRuntime_ScheduledWithoutHandler(t *testing.T) {
	var logs syncBuffer
	rt := newRuntime(t, `module.exports.default = { fetch() { return new Response("x") } };`,
		worker.Config{Isolates: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if res := scheduled(t, rt, "", 1); res.Outcome != "exception" {
		t.Fatalf("no handler = %+v", res)
	}
	if !strings.Contains(logs.String(), "we lack a handler for ScheduledEvents") {
		t.Errorf("log = %s", logs.String())
	}
}

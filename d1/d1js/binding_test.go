package d1js_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/d1/d1js"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/worker"
)

// evalWorker runs the request body as the body of an async function of
// env and answers with JSON of its result (an error as {name, message,
// cause}).
const evalWorker = `
// Code generation is refused once the top level has run, as on workerd:
// the constructor is taken here, at startup, for the harness.
const compile = Function;
export default {
  async fetch(request, env) {
    const fn = new compile("env", "return (async () => {" + await request.text() + "})()");
    try {
      return Response.json(await fn(env) ?? null);
    } catch (e) {
      return Response.json({ name: e?.name, message: e?.message, cause: e?.cause?.message });
    }
  },
};`

const testCell = "d1:test-db"

func newEvalRuntime(t testing.TB, c cell.Caller) *worker.Runtime {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(evalWorker), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := deploy.Bundle(dir, "index.js")
	if err != nil {
		t.Fatal(err)
	}
	script, err := worker.Compile("eval", b.Code)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Bindings: map[string]worker.Binding{"DB": d1js.Binding(c, testCell)}, Isolates: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

func eval(t *testing.T, rt *worker.Runtime, body string) string {
	t.Helper()
	resp, err := rt.Fetch(context.Background(), &worker.Request{Method: "POST", URL: "http://localhost/", Header: http.Header{}, Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	return string(resp.Body)
}

func TestBinding_API(t *testing.T) {
	lc := newLocalCaller(t)
	rt := newEvalRuntime(t, lc)
	check := func(name, js, want string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			if got := eval(t, rt, js); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	eval(t, rt, `await env.DB.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v, b BLOB)"); return 1`)

	check("bind types", `
		await env.DB.prepare("INSERT INTO t (v, b) VALUES (?, ?), (?, ?), (?, ?)")
			.bind(true, new Uint8Array([1, 2, 255]).buffer, 2.5, new Uint16Array([258]), "s", [7, 8]).run();
		return await env.DB.prepare("SELECT v, typeof(v) AS tv, b FROM t ORDER BY id").raw();`,
		`[[1,"real",[1,2,255]],[2.5,"real",[2,1]],["s","text",[7,8]]]`)
	// workerd binds every number as REAL (recorded in
	// internal/conformance/testdata/celld/d1-binding-types).
	check("numbers bind as REAL", `
		return await env.DB.prepare("SELECT 'id-' || ? AS a, 'id-' || ? AS b").bind(5, 1.5).first();`,
		`{"a":"id-5.0","b":"id-1.5"}`)
	check("undefined is a type error", `
		try { env.DB.prepare("SELECT ?").bind(undefined); return "bound"; } catch (e) {
			return { message: e.message, cause: e.cause.message };
		}`,
		`{"message":"D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'","cause":"Type 'undefined' not supported for value 'undefined'"}`)
	check("bigint is a type error", `env.DB.prepare("SELECT ?").bind(5n)`,
		`{"name":"Error","message":"D1_TYPE_ERROR: Type 'bigint' not supported for value '5'","cause":"Type 'bigint' not supported for value '5'"}`)
	check("SQL errors carry a cause", `await env.DB.prepare("SELEC 1").all()`,
		`{"name":"Error","message":"D1_ERROR: near \"SELEC\": syntax error at offset 0: SQLITE_ERROR","cause":"near \"SELEC\": syntax error at offset 0: SQLITE_ERROR"}`)
	check("batch is all or nothing", `
		const before = await env.DB.prepare("SELECT count(*) AS n FROM t").first("n");
		const err = await env.DB.batch([
			env.DB.prepare("INSERT INTO t (v) VALUES (?)").bind("in batch"),
			env.DB.prepare("INSERT INTO t (id) VALUES (1)"),
		]).then(() => "ok", (e) => e.message);
		return { err, same: before === await env.DB.prepare("SELECT count(*) AS n FROM t").first("n") };`,
		`{"err":"D1_ERROR: UNIQUE constraint failed: t.id: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)","same":true}`)
	check("empty exec", `await env.DB.exec("  ")`,
		`{"name":"Error","message":"D1_EXEC_ERROR: Error in line 1: : No SQL statements detected.","cause":"Error in line 1: : No SQL statements detected."}`)
	check("empty batch", `await env.DB.batch([])`,
		`{"name":"Error","message":"D1_ERROR: No SQL statements detected.","cause":"No SQL statements detected."}`)
	check("meta", `
		const r = await env.DB.prepare("INSERT INTO t (v) VALUES ('m')").run();
		const m = r.meta;
		return [r.success, r.results, m.changes, m.rows_written, m.changed_db, m.last_row_id > 0, typeof m.duration,
			m.size_after > 0, m.served_by_primary, typeof m.timings.sql_duration_ms];`,
		`[true,[],1,1,true,true,"number",true,true,"number"]`)
	check("sessions and bookmarks", `
		const s = env.DB.withSession("first-primary");
		const none = s.getBookmark();
		await s.prepare("SELECT 1").all();
		const b1 = s.getBookmark();
		await s.batch([s.prepare("INSERT INTO t (v) VALUES ('session')")]);
		const b2 = s.getBookmark();
		const given = env.DB.withSession(b1).getBookmark();
		return [none, typeof b1, b2 > b1, given === b1, env.DB.withSession().getBookmark()];`,
		`[null,"string",true,true,null]`)
	check("too many rows", `
		await env.DB.prepare("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100001) SELECT x FROM c").all()`,
		`{"name":"Error","message":"D1_ERROR: `+d1.ErrResultTooLarge.Error()+`","cause":"`+d1.ErrResultTooLarge.Error()+`"}`)
	check("100000 rows are fine", `
		return (await env.DB.prepare("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT x FROM c").raw()).length`,
		`100000`)
	check("too many bytes", `
		await env.DB.prepare("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) SELECT randomblob(1000000) FROM c").all()`,
		`{"name":"Error","message":"D1_ERROR: `+d1.ErrResultTooLarge.Error()+`","cause":"`+d1.ErrResultTooLarge.Error()+`"}`)
	check("dump is refused", `return await env.DB.dump().then(() => "ok", (e) => e.message.split(":")[0])`, `"D1_DUMP_ERROR"`)
}

// A failure to reach the cell rejects with a D1_ERROR; the cell's own
// errors keep their prefix.
func TestBinding_callErrors(t *testing.T) {
	rt := newEvalRuntime(t, cell.CallerFunc(func(_ context.Context, name string, req []byte) ([]byte, error) {
		switch {
		case strings.HasPrefix(string(req), `{"op":"exec"}`):
			// As a refusal arrives from a cell on a peer: text and code.
			return nil, &host.RequestError{Message: d1.PrefixExecError + "Error in line 1: x: boom", Code: "D1_EXEC_ERROR"}
		case strings.Contains(string(req), "local"):
			// As it comes from a handler run in-process.
			return nil, &d1.Error{Prefix: d1.PrefixError, Msg: "no such table: local"}
		}
		return nil, fmt.Errorf("cell %s: owner unreachable", name)
	}))
	got := eval(t, rt, `return [await env.DB.prepare("SELECT 1").all().catch((e) => e.message), await env.DB.exec("x").catch((e) => e.message),
		await env.DB.prepare("SELECT * FROM local").all().catch((e) => e.message)]`)
	want := `["D1_ERROR: cell d1:test-db: owner unreachable","D1_EXEC_ERROR: Error in line 1: x: boom","D1_ERROR: no such table: local"]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

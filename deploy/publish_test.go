package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

var ctx = context.Background()

func TestDeploy_WritesVersionThenFlips(t *testing.T) {
	s := bucket.NewMem()
	r, err := deploy.Deploy(ctx, s, okProject(t), deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(r.Version) {
		t.Errorf("version %q is not 16 hex digits", r.Version)
	}
	prefix := "deploy/my-worker/" + r.Version + "/"
	if r.Worker != "my-worker" || r.Prefix != prefix || r.DryRun || r.Unchanged {
		t.Errorf("result %+v", r)
	}
	if got, want := keys(t, s), []string{"deploy/current.json", prefix + "index.js", prefix + "manifest.json"}; !slices.Equal(got, want) {
		t.Fatalf("keys\n got %q\nwant %q", got, want)
	}

	cur, _, err := s.Get(ctx, "deploy/current.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(cur), `{"script_name":"my-worker","version":"`+r.Version+`","prefix":"`+prefix+`"}`+"\n"; got != want {
		t.Errorf("current.json\n got %s\nwant %s", got, want)
	}

	var m map[string]any
	mj, _, _ := s.Get(ctx, prefix+"manifest.json")
	if err := json.Unmarshal(mj, &m); err != nil {
		t.Fatal(err)
	}
	wantManifest := map[string]any{
		"format":             1.0,
		"script_name":        "my-worker",
		"version":            r.Version,
		"main":               "index.js",
		"compatibility_date": "2025-01-01",
		"vars":               map[string]any{"GREETING": "hi"},
		"durable_objects": map[string]any{
			"bindings":       []any{map[string]any{"name": "COUNTER", "class_name": "Counter"}},
			"classes":        []any{"Counter"},
			"sqlite_classes": []any{"Counter"},
		},
		"migrations": []any{map[string]any{"tag": "v1", "new_sqlite_classes": []any{"Counter"}}},
	}
	if !reflect.DeepEqual(m, wantManifest) {
		t.Errorf("manifest\n got %v\nwant %v", m, wantManifest)
	}

	d, err := deploy.Current(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	code, _, _ := s.Get(ctx, prefix+"index.js")
	if d.Manifest.Version != r.Version || d.Prefix != prefix || string(d.Code) != string(code) || d.ETag == "" {
		t.Errorf("Current = %+v", d)
	}
	if d.Manifest.Vars["GREETING"] != "hi" || d.Manifest.DurableObjects.Bindings[0].ClassName != "Counter" {
		t.Errorf("Current manifest = %+v", d.Manifest)
	}
}

func TestDeploy_IdenticalRedeployIsANoOp(t *testing.T) {
	s := newCountingStore()
	dir := okProject(t)
	first, err := deploy.Deploy(ctx, s, dir, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := keys(t, s)
	puts := s.count("put")
	second, err := deploy.Deploy(ctx, s, dir, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if second.Version != first.Version {
		t.Errorf("redeploy gave version %s, first %s", second.Version, first.Version)
	}
	if !second.Unchanged {
		t.Error("redeploy not reported unchanged")
	}
	if n := s.count("put") - puts; n != 0 {
		t.Errorf("redeploy wrote %d objects", n)
	}
	if got := keys(t, s); !slices.Equal(got, before) {
		t.Errorf("keys after redeploy %q, before %q", got, before)
	}

	// The same project from another directory (another machine, a CI
	// checkout) is the same version.
	other := okProject(t)
	third, err := deploy.Deploy(ctx, s, other, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Version != first.Version {
		t.Errorf("same project elsewhere gave version %s, want %s", third.Version, first.Version)
	}
}

func TestDeploy_NewVersionFlipsCurrent(t *testing.T) {
	s := bucket.NewMem()
	dir := okProject(t)
	v1, err := deploy.Deploy(ctx, s, dir, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src/index.js"), []byte(okWorker+"\n// v2\nexport const v = 2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v2, err := deploy.Deploy(ctx, s, dir, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version == v1.Version || v2.Unchanged {
		t.Fatalf("changed code gave %+v after %+v", v2, v1)
	}
	d, err := deploy.Current(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Manifest.Version != v2.Version {
		t.Errorf("current is %s, want %s", d.Manifest.Version, v2.Version)
	}
	if got := len(keys(t, s)); got != 5 {
		t.Errorf("%d keys, want both versions (4) and current.json", got)
	}

	// Going back to v1 flips current.json without rewriting v1.
	if err := os.WriteFile(filepath.Join(dir, "src/index.js"), []byte(okWorker), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := deploy.Deploy(ctx, s, dir, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Version != v1.Version || back.Unchanged {
		t.Errorf("rollback gave %+v, want version %s, flipped", back, v1.Version)
	}
}

// A project that cannot be deployed makes no call to the store at all.
func TestDeploy_BadProjectWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"unknown key", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","routez":["example.com/*"]}`, "index.js": "export default {}"},
			`wrangler.jsonc: unknown key "routez"`},
		{"syntax error", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js"}`, "index.js": "export default {\n  fetch() { return 1 +* 2 }\n}\n"},
			`index.js:2:23: Unexpected "*"`},
		{"missing main", map[string]string{"wrangler.jsonc": `{"name":"w","main":"src/index.ts"}`},
			`wrangler.jsonc: main "src/index.ts" does not exist`},
		{"no main key", map[string]string{"wrangler.jsonc": `{"name":"w"}`},
			`wrangler.jsonc: "main" is required`},
		{"unserved binding", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","d1_databases":[{"binding":"DB","database_name":"db","database_id":"x"}]}`, "index.js": "export default {}"},
			`binding kind d1_databases (binding DB) is not served by this celld yet`},
		{"top-level await", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js"}`, "index.js": "await 1;\nexport default {}"},
			`index.js:1:1: Top-level await`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newCountingStore()
			_, err := deploy.Deploy(ctx, s, project(t, tc.files), deploy.Options{})
			wantProblem(t, err, tc.want)
			var pe *deploy.ProjectError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ProjectError", err)
			}
			if n := s.total(); n != 0 {
				t.Errorf("%d store calls (%v), want none", n, s.calls)
			}
			if ks := keys(t, s); len(ks) != 0 {
				t.Errorf("keys %q, want none", ks)
			}
		})
	}
}

func TestDeploy_DryRun(t *testing.T) {
	s := newCountingStore()
	dir := okProject(t)
	dry, err := deploy.Deploy(ctx, s, dir, deploy.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Worker != "my-worker" || dry.Version == "" {
		t.Errorf("dry run result %+v", dry)
	}
	// A dry run reads the secrets' names (one get) and writes nothing.
	if n, gets := s.total(), s.count("get"); n != gets || gets > 1 {
		t.Errorf("dry run made %d store calls, %d of them gets", n, gets)
	}
	if _, err := deploy.Deploy(ctx, nil, dir, deploy.Options{DryRun: true}); err != nil {
		t.Errorf("dry run without a store: %v", err)
	}
	real, err := deploy.Deploy(ctx, s, dir, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if real.Version != dry.Version {
		t.Errorf("deploy gave version %s, dry run %s", real.Version, dry.Version)
	}
}

func TestPublish_LostRaceIsRetried(t *testing.T) {
	s := bucket.NewMem()
	// Another tool's record, with a field celld does not know.
	if _, err := s.Put(ctx, deploy.CurrentKey, []byte(`{"script_name":"old","version":"0","prefix":"deploy/old/0/","note":"keep me"}`), bucket.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	raced, racing := 0, false
	s.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" && c.Key == deploy.CurrentKey && raced < 2 && !racing {
			raced++
			// A racing deploy moves current.json just before our CAS lands.
			return bucket.Fault{Race: func(st bucket.Store) {
				racing = true // the rival's own put runs through this func too
				defer func() { racing = false }()
				_, _ = st.Put(ctx, deploy.CurrentKey, []byte(`{"script_name":"rival","version":"1","prefix":"deploy/rival/1/","note":"keep me"}`), bucket.Cond{})
			}}
		}
		return bucket.Fault{}
	})
	p, err := deploy.Publish(ctx, s, "w", deploy.Manifest{}, []byte("module.exports = {};"))
	if err != nil {
		t.Fatal(err)
	}
	if raced != 2 {
		t.Fatalf("raced %d times, want 2", raced)
	}
	cur, _, _ := s.Get(ctx, deploy.CurrentKey)
	want := `{"script_name":"w","version":"` + p.Version + `","prefix":"deploy/w/` + p.Version + `/","note":"keep me"}` + "\n"
	if string(cur) != want {
		t.Errorf("current.json\n got %s\nwant %s", cur, want)
	}
}

func TestPublish_RaceBudgetRunsOut(t *testing.T) {
	s := bucket.NewMem()
	n, racing := 0, false
	s.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" && c.Key == deploy.CurrentKey && !racing {
			n++
			return bucket.Fault{Race: func(st bucket.Store) {
				racing = true // the rival's own put runs through this func too
				defer func() { racing = false }()
				_, _ = st.Put(ctx, deploy.CurrentKey, []byte(`{"script_name":"rival","version":"`+string(rune('a'+n))+`","prefix":"p/"}`), bucket.Cond{})
			}}
		}
		return bucket.Fault{}
	})
	_, err := deploy.Publish(ctx, s, "w", deploy.Manifest{}, []byte("x"))
	wantProblem(t, err, "flip deploy/current.json: lost the race 5 times")
}

func TestPublish_AmbiguousWritesSettleByReading(t *testing.T) {
	s := bucket.NewMem()
	s.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			return bucket.Fault{LoseResponse: true} // applied, but the answer is lost
		}
		return bucket.Fault{}
	})
	p, err := deploy.Publish(ctx, s, "w", deploy.Manifest{}, []byte("module.exports = {};"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Unchanged {
		t.Error("a first publish reported unchanged")
	}
	s.SetFaults(nil)
	d, err := deploy.Current(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Manifest.Version != p.Version || string(d.Code) != "module.exports = {};" {
		t.Errorf("Current = %+v", d)
	}
}

func TestPublish_StoreDownIsAnError(t *testing.T) {
	s := bucket.NewMem()
	s.SetFaults(func(c bucket.Call) bucket.Fault { return bucket.Fault{Status: 503} })
	_, err := deploy.Publish(ctx, s, "w", deploy.Manifest{}, []byte("x"))
	if err == nil {
		t.Fatal("publish to a store answering 503 succeeded")
	}
	var pe *deploy.ProjectError
	if errors.As(err, &pe) {
		t.Errorf("a store fault is a *ProjectError: %v", err)
	}
}

func TestPublish_RestoresDeletedCode(t *testing.T) {
	s := bucket.NewMem()
	p, err := deploy.Publish(ctx, s, "w", deploy.Manifest{}, []byte("code"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, p.Prefix+"index.js"); err != nil {
		t.Fatal(err)
	}
	again, err := deploy.Publish(ctx, s, "w", deploy.Manifest{}, []byte("code"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Unchanged {
		t.Error("rewriting the missing code reported unchanged")
	}
	if got, _, err := s.Get(ctx, p.Prefix+"index.js"); err != nil || string(got) != "code" {
		t.Errorf("code = %q, %v", got, err)
	}
}

func TestCurrent(t *testing.T) {
	t.Run("nothing deployed", func(t *testing.T) {
		_, err := deploy.Current(ctx, bucket.NewMem())
		if !errors.Is(err, deploy.ErrNoDeployment) {
			t.Errorf("error %v, want ErrNoDeployment", err)
		}
	})
	t.Run("unknown manifest format", func(t *testing.T) {
		s := bucket.NewMem()
		_, _ = s.Put(ctx, deploy.CurrentKey, []byte(`{"script_name":"w","version":"v","prefix":"deploy/w/v/"}`), bucket.Cond{})
		_, _ = s.Put(ctx, "deploy/w/v/manifest.json", []byte(`{"format":2,"script_name":"w","version":"v","main":"index.js"}`), bucket.Cond{})
		_, err := deploy.Current(ctx, s)
		wantProblem(t, err, "manifest format 2 is not known to this celld")
	})
	t.Run("manifest of another version", func(t *testing.T) {
		s := bucket.NewMem()
		_, _ = s.Put(ctx, deploy.CurrentKey, []byte(`{"script_name":"w","version":"v","prefix":"deploy/w/v/"}`), bucket.Cond{})
		_, _ = s.Put(ctx, "deploy/w/v/manifest.json", []byte(`{"format":1,"script_name":"w","version":"u","main":"index.js"}`), bucket.Cond{})
		_, err := deploy.Current(ctx, s)
		wantProblem(t, err, "holds w version u, but deploy/current.json names w version v")
	})
	t.Run("missing code", func(t *testing.T) {
		s := bucket.NewMem()
		_, _ = s.Put(ctx, deploy.CurrentKey, []byte(`{"script_name":"w","version":"v","prefix":"deploy/w/v/"}`), bucket.Cond{})
		_, _ = s.Put(ctx, "deploy/w/v/manifest.json", []byte(`{"format":1,"script_name":"w","version":"v","main":"index.js"}`), bucket.Cond{})
		_, err := deploy.Current(ctx, s)
		if !errors.Is(err, bucket.ErrNotFound) {
			t.Errorf("error %v, want ErrNotFound", err)
		}
	})
}

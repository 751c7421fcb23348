package deploy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/celldgo/celld/deploy"
)

func TestParseConfig_JSONC(t *testing.T) {
	src := `// leading comment
{
  /* block
     comment */
  "name": "w", // trailing comment
  "main": "src/index.ts",
  "compatibility_flags": ["nodejs_compat",],
  "vars": {
    "URL": "https://example.com/a//b", // "//" inside a string is not a comment
    "GLOB": "/* not a comment */",
    "TRICKY": "ends with a comma,]",
    "QUOTE": "a \"quoted\" // word",
    "BIG": 9007199254740993,
    "OBJ": { "a": [1, 2,], },
  },
  "triggers": { "crons": ["*/5 * * * *"], },
}
`
	cfg, err := deploy.ParseConfig("wrangler.jsonc", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Name, "w"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if got, want := cfg.CompatibilityFlags, []string{"nodejs_compat"}; !reflect.DeepEqual(got, want) {
		t.Errorf("compatibility_flags %q, want %q", got, want)
	}
	wantVars := map[string]any{
		"URL":    "https://example.com/a//b",
		"GLOB":   "/* not a comment */",
		"TRICKY": "ends with a comma,]",
		"QUOTE":  `a "quoted" // word`,
		"BIG":    json.Number("9007199254740993"),
		"OBJ":    map[string]any{"a": []any{json.Number("1"), json.Number("2")}},
	}
	if !reflect.DeepEqual(cfg.Vars, wantVars) {
		t.Errorf("vars %#v\nwant %#v", cfg.Vars, wantVars)
	}
	if got, want := cfg.Triggers.Crons, []string{"*/5 * * * *"}; !reflect.DeepEqual(got, want) {
		t.Errorf("crons %q, want %q", got, want)
	}
}

func TestParseConfig_Errors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown top-level key", `{"name":"w","main":"i.js","servicez":[]}`, `wrangler.jsonc: unknown key "servicez"`},
		{"unknown key in an env", `{"name":"w","env":{"staging":{"routez":1}}}`, `wrangler.jsonc: unknown key "env.staging.routez"`},
		{"env inside an env", `{"name":"w","env":{"staging":{"env":{}}}}`, `wrangler.jsonc: unknown key "env.staging.env"`},
		{"unknown nested key", `{"name":"w","durable_objects":{"bindings":[{"name":"A","class_name":"A","environment":"prod"}]}}`,
			`wrangler.jsonc: unknown key "durable_objects.bindings[0].environment"`},
		{"key in the wrong case", `{"Name":"w"}`, `wrangler.jsonc: unknown key "Name"`},
		{"unknown queue key", `{"queues":{"consumers":[{"queue":"q","max_concurrent":2}]}}`,
			`wrangler.jsonc: unknown key "queues.consumers[0].max_concurrent"`},
		{"syntax error with position", "{\n  \"name\": \"w\"\n  \"main\": \"i.js\"\n}", "wrangler.jsonc:3:3: invalid character '\"' after object key:value pair"},
		{"wrong type", "{\n  \"name\": 3\n}", "wrangler.jsonc:2:11: name: want a string, got JSON number"},
		{"unterminated comment", "{ /* open", "wrangler.jsonc:1:3: unterminated /* comment"},
		{"not an object", `[1]`, "wrangler.jsonc: want a JSON object at the top level"},
		{"empty", "  // nothing\n", "wrangler.jsonc: empty or truncated JSON"},
		{"trailing data", `{"name":"w"} {}`, "unexpected data after the top-level value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deploy.ParseConfig("wrangler.jsonc", []byte(tc.src))
			wantProblem(t, err, tc.want)
			var pe *deploy.ProjectError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ProjectError", err)
			}
		})
	}
}

func TestParseConfig_SchemaKeyIgnored(t *testing.T) {
	if _, err := deploy.ParseConfig("wrangler.jsonc", []byte(`{"$schema":"node_modules/wrangler/config-schema.json","name":"w"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfig_Validation(t *testing.T) {
	const main = `export default {}`
	for _, tc := range []struct {
		name   string
		config string
		caps   deploy.Capabilities
		want   string // "" means valid
	}{
		{"valid", okConfig, deploy.Capabilities{}, ""},
		{"name missing", `{"main":"src/index.js"}`, deploy.Capabilities{}, `wrangler.jsonc: "name" is required`},
		{"name with capitals", `{"name":"MyWorker","main":"src/index.js"}`, deploy.Capabilities{}, `wrangler.jsonc: name "MyWorker": use 1 to 63 lowercase letters`},
		{"main missing", `{"name":"w"}`, deploy.Capabilities{}, `wrangler.jsonc: "main" is required`},
		{"main not on disk", `{"name":"w","main":"src/worker.ts"}`, deploy.Capabilities{}, `wrangler.jsonc: main "src/worker.ts" does not exist`},
		{"main is a directory", `{"name":"w","main":"src"}`, deploy.Capabilities{}, `main "src" is a directory`},
		{"bad date", `{"name":"w","main":"src/index.js","compatibility_date":"2025/01/01"}`, deploy.Capabilities{}, `compatibility_date "2025/01/01": want YYYY-MM-DD`},
		{"class without migration",
			`{"name":"w","main":"src/index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]}}`,
			deploy.Capabilities{}, `durable_objects.bindings[0] (binding ROOM): class "Room" is not created by any migration`},
		{"class from new_classes is fine",
			`{"name":"w","main":"src/index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},"migrations":[{"tag":"v1","new_classes":["Room"]}]}`,
			deploy.Capabilities{}, ""},
		{"renamed class is found under its new name",
			`{"name":"w","main":"src/index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Chat"}]},
			  "migrations":[{"tag":"v1","new_sqlite_classes":["Room"]},{"tag":"v2","renamed_classes":[{"from":"Room","to":"Chat"}]}]}`,
			deploy.Capabilities{}, ""},
		{"deleted class is gone",
			`{"name":"w","main":"src/index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},
			  "migrations":[{"tag":"v1","new_sqlite_classes":["Room"]},{"tag":"v2","deleted_classes":["Room"]}]}`,
			deploy.Capabilities{}, `class "Room" is not created by any migration`},
		{"duplicate tag", `{"name":"w","main":"src/index.js","migrations":[{"tag":"v1"},{"tag":"v1"}]}`, deploy.Capabilities{}, `migrations[1]: tag "v1" is used twice`},
		{"class in another script",
			`{"name":"w","main":"src/index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room","script_name":"other"}]}}`,
			deploy.Capabilities{}, `script_name "other" names another Worker`},
		{"duplicate binding name",
			`{"name":"w","main":"src/index.js","vars":{"ROOM":"x"},"durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},"migrations":[{"tag":"v1","new_sqlite_classes":["Room"]}]}`,
			deploy.Capabilities{}, `durable_objects.bindings[0]: binding name "ROOM" is already used by vars.ROOM`},
		{"binding not an identifier", `{"name":"w","main":"src/index.js","vars":{"MY-VAR":"x"}}`, deploy.Capabilities{}, `vars.MY-VAR: binding name "MY-VAR" is not a JavaScript identifier`},
		{"d1 not served", `{"name":"w","main":"src/index.js","d1_databases":[{"binding":"DB","database_name":"ledger","database_id":"x"}]}`,
			deploy.Capabilities{}, `wrangler.jsonc: binding kind d1_databases (binding DB) is not served by this celld yet`},
		{"d1 served", `{"name":"w","main":"src/index.js","d1_databases":[{"binding":"DB","database_name":"ledger","database_id":"x","migrations_dir":"m"}]}`,
			deploy.Capabilities{D1: true}, ""},
		{"kv not served", `{"name":"w","main":"src/index.js","kv_namespaces":[{"binding":"KV","id":"abc"}]}`,
			deploy.Capabilities{}, `binding kind kv_namespaces (binding KV) is not served by this celld yet`},
		{"r2 not served", `{"name":"w","main":"src/index.js","r2_buckets":[{"binding":"B","bucket_name":"assets"}]}`,
			deploy.Capabilities{}, `binding kind r2_buckets (binding B) is not served by this celld yet`},
		{"r2 bad bucket name", `{"name":"w","main":"src/index.js","r2_buckets":[{"binding":"B","bucket_name":"Assets_1"}]}`,
			deploy.Capabilities{R2: true}, `r2_buckets[0].bucket_name="Assets_1" is invalid. Bucket names must begin and end with an alphanumeric character`},
		{"r2 served", `{"name":"w","main":"src/index.js","r2_buckets":[{"binding":"B","bucket_name":"assets"}]}`,
			deploy.Capabilities{R2: true}, ""},
		{"queue producer not served", `{"name":"w","main":"src/index.js","queues":{"producers":[{"binding":"Q","queue":"jobs"}]}}`,
			deploy.Capabilities{}, `binding kind queues.producers (binding Q) is not served by this celld yet`},
		{"queue consumer not served", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","max_batch_size":10,"max_batch_timeout":5,"max_retries":3,"dead_letter_queue":"dlq"}]}}`,
			deploy.Capabilities{}, `binding kind queues.consumers (queue jobs) is not served by this celld yet`},
		{"queues served", `{"name":"w","main":"src/index.js","queues":{"producers":[{"binding":"Q","queue":"jobs"}],"consumers":[{"queue":"jobs"}]}}`,
			deploy.Capabilities{Queues: true}, ""},
		{"queue every consumer key", `{"name":"w","main":"src/index.js","queues":{"producers":[{"binding":"Q","queue":"jobs","delivery_delay":30,"remote":false}],"consumers":[{"queue":"jobs","type":"worker","max_batch_size":100,"max_batch_timeout":60,"max_retries":100,"retry_delay":86400,"max_concurrency":250,"dead_letter_queue":"jobs-dlq","visibility_timeout_ms":30000}]}}`,
			deploy.Capabilities{Queues: true}, ""},
		{"queue two consumers", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs"},{"queue":"jobs"}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[1]: queue \"jobs\" already has a consumer (queues.consumers[0]); a queue has exactly one consumer"},
		{"queue batch size", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","max_batch_size":101}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0].max_batch_size=101 is out of range: it must be between 1 and 100"},
		{"queue batch timeout", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","max_batch_timeout":61}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0].max_batch_timeout=61 is out of range: it must be between 0 and 60"},
		{"queue retries", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","max_retries":101}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0].max_retries=101 is out of range: it must be between 0 and 100"},
		{"queue retry delay", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","retry_delay":-1}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0].retry_delay=-1 is out of range: it must be between 0 and 86400"},
		{"queue concurrency", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","max_concurrency":251}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0].max_concurrency=251 is out of range: it must be between 1 and 250"},
		{"queue delivery delay", `{"name":"w","main":"src/index.js","queues":{"producers":[{"binding":"Q","queue":"jobs","delivery_delay":86401}]}}`,
			deploy.Capabilities{Queues: true}, "queues.producers[0].delivery_delay=86401 is out of range: it must be between 0 and 86400"},
		{"queue pull consumer", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","type":"http_pull"}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0]: \"type\": \"http_pull\" (pull consumers) is not served by celld"},
		{"queue bad name", `{"name":"w","main":"src/index.js","queues":{"producers":[{"binding":"Q","queue":"a/b"}]}}`,
			deploy.Capabilities{Queues: true}, "queues.producers[0].queue=\"a/b\" is not a valid queue name"},
		{"queue dlq is itself", `{"name":"w","main":"src/index.js","queues":{"consumers":[{"queue":"jobs","dead_letter_queue":"jobs"}]}}`,
			deploy.Capabilities{Queues: true}, "queues.consumers[0]: dead_letter_queue \"jobs\" is the queue itself"},
		{"crons not served", `{"name":"w","main":"src/index.js","triggers":{"crons":["*/3 * * * *"]}}`,
			deploy.Capabilities{}, `binding kind triggers.crons (cron "*/3 * * * *") is not served by this celld yet`},
		{"crons served", `{"name":"w","main":"src/index.js","triggers":{"crons":["*/3 * * * *","0 18 * * 6L","59 23 LW * *"]}}`,
			deploy.Capabilities{Triggers: true}, ""},
		{"cron with a bad field", `{"name":"w","main":"src/index.js","triggers":{"crons":["* * * * *","0 25 * * *"]}}`,
			deploy.Capabilities{Triggers: true}, `triggers.crons[1]: invalid cron expression "0 25 * * *": hour field "25": 25 is out of range 0-23`},
		{"cron with four fields", `{"name":"w","main":"src/index.js","triggers":{"crons":["* * * *"]}}`,
			deploy.Capabilities{Triggers: true}, `triggers.crons[0]: invalid cron expression "* * * *": 4 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"cron listed twice", `{"name":"w","main":"src/index.js","triggers":{"crons":["0 * * * *","0 * * * *"]}}`,
			deploy.Capabilities{Triggers: true}, `triggers.crons[1]: "0 * * * *" is listed twice (also at [0])`},
		{"too many crons", `{"name":"w","main":"src/index.js","triggers":{"crons":[` + manyCrons(251) + `]}}`,
			deploy.Capabilities{Triggers: true}, `251 cron triggers, more than the 250 a Worker may have`},
		{"class named like a built-in cell",
			`{"name":"w","main":"src/index.js","durable_objects":{"bindings":[{"name":"K","class_name":"kv"}]},"migrations":[{"tag":"v1","new_sqlite_classes":["kv"]}]}`,
			deploy.Capabilities{}, `durable_objects.bindings[0] (binding K): class name "kv" is reserved for celld's built-in cells`},
		{"kv without id", `{"name":"w","main":"src/index.js","kv_namespaces":[{"binding":"KV"}]}`,
			deploy.Capabilities{KV: true}, `kv_namespaces[0] (binding KV): "id" is required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := project(t, map[string]string{"wrangler.jsonc": tc.config, "src/index.js": main})
			cfg, err := deploy.LoadConfig(dir, tc.caps)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				if cfg == nil {
					t.Fatal("no config")
				}
				return
			}
			wantProblem(t, err, tc.want)
			var pe *deploy.ProjectError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProjectError", err)
			}
		})
	}
}

func TestLoadConfig_ReportsEveryProblem(t *testing.T) {
	dir := project(t, map[string]string{"wrangler.jsonc": `{"name":"W","kv_namespaces":[{"binding":"KV","id":"x"}]}`})
	_, err := deploy.LoadConfig(dir, deploy.Capabilities{})
	var pe *deploy.ProjectError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ProjectError", err, err)
	}
	want := []string{
		`wrangler.jsonc: name "W": use 1 to 63 lowercase letters, digits and dashes, not starting or ending with a dash`,
		`wrangler.jsonc: "main" is required: the path of the Worker's entry module, e.g. "src/index.ts"`,
		`wrangler.jsonc: binding kind kv_namespaces (binding KV) is not served by this celld yet`,
	}
	if !reflect.DeepEqual(pe.Problems, want) {
		t.Errorf("problems\n got %q\nwant %q", pe.Problems, want)
	}
	if pe.Hint == "" {
		t.Error("no hint for an unserved binding")
	}
}

func TestLoadConfig_Files(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // "" means found
	}{
		{"jsonc", map[string]string{"wrangler.jsonc": `{"name":"w","main":"i.js"}`, "i.js": ""}, ""},
		{"json", map[string]string{"wrangler.json": `{"name":"w","main":"i.js"}`, "i.js": ""}, ""},
		{"toml", map[string]string{"wrangler.toml": "name = \"w\"\nmain = \"i.js\"\n", "i.js": ""}, ""},
		{"neither", map[string]string{"i.js": ""}, "no wrangler.jsonc, wrangler.json or wrangler.toml in"},
		{"toml is validated", map[string]string{"wrangler.toml": `name = "w"`}, `wrangler.toml: "main" is required`},
		{"both", map[string]string{"wrangler.json": `{}`, "wrangler.jsonc": `{}`}, "wrangler.jsonc and wrangler.json exist"},
		{"json and toml", map[string]string{"wrangler.json": `{}`, "wrangler.toml": ``}, "wrangler.json and wrangler.toml exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deploy.LoadConfig(project(t, tc.files), deploy.Capabilities{})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantProblem(t, err, tc.want)
		})
	}
	t.Run("missing directory", func(t *testing.T) {
		_, err := deploy.LoadConfig(t.TempDir()+"/nope", deploy.Capabilities{})
		wantProblem(t, err, "nope: no such file or directory")
		if !strings.Contains(err.Error(), "project directory") {
			t.Errorf("error %q does not say it is the project directory", err)
		}
	})
}

// manyCrons lists n distinct valid expressions, as JSON strings.
func manyCrons(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`"%d %d * * *"`, i%60, i/60)
	}
	return strings.Join(out, ",")
}

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectConfig_OneModel(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "wrangler.toml"), []byte(`name = "w"
main = "i.js"
observability = { enabled = true }
[[d1_databases]]
binding = "DB"
database_name = "top"
migrations_table = "history"
[[kv_namespaces]]
binding = "KV"
id = "top-ns"
preview_id = "preview-ns"
[env.staging]
d1_databases = [{ binding = "DB", database_name = "stage" }]
`), 0o644)
	cfg, path, err := findProjectConfig(dir, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "wrangler.toml" || cfg.D1Databases[0].MigrationsTable != "history" || cfg.KVNamespaces[0].PreviewID != "preview-ns" {
		t.Errorf("top level: %s %+v %+v", path, cfg.D1Databases, cfg.KVNamespaces)
	}
	st, _, err := findProjectConfig(dir, "", "staging", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.D1Databases) != 1 || st.D1Databases[0].DatabaseName != "stage" || len(st.KVNamespaces) != 0 {
		t.Errorf("staging: %+v %+v: want its own bindings only", st.D1Databases, st.KVNamespaces)
	}
	_, _, err = findProjectConfig(dir, "", "qa", "")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != ExitUsage || !strings.Contains(err.Error(), `No environment found in configuration with name "qa"`) {
		t.Errorf("missing env: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "wrangler.toml"), []byte("name = \"w\"\nservicez = []\n"), 0o644)
	if _, _, err := findProjectConfig(dir, "", "", ""); err == nil || !strings.Contains(err.Error(), `unknown key "servicez"`) {
		t.Errorf("unknown key: %v", err)
	}
}

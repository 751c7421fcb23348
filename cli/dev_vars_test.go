package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDevVars_Precedence(t *testing.T) {
	dir := t.TempDir()
	w := func(name, body string) { os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644) }
	w(".env", "A=env\nB=env\n")
	w(".env.local", "B=local\n")
	w(".env.staging", "C=staging # comment\nexport D='lit # eral'\nE=\"two\\nlines\"\n")
	got, files, err := devVars(dir, "staging")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "env", "B": "local", "C": "staging", "D": "lit # eral", "E": "two\nlines"}
	if !reflect.DeepEqual(got, want) || len(files) != 3 {
		t.Errorf(".env files: %q from %q, want %q", got, files, want)
	}
	w(".dev.vars", "X=dev\n")
	if got, _, _ := devVars(dir, "staging"); !reflect.DeepEqual(got, map[string]string{"X": "dev"}) {
		t.Errorf("with .dev.vars: %q, want only its values (.env is ignored)", got)
	}
	w(".dev.vars.staging", "Y=staging\n")
	if got, _, _ := devVars(dir, "staging"); !reflect.DeepEqual(got, map[string]string{"Y": "staging"}) {
		t.Errorf("with .dev.vars.staging: %q", got)
	}
	if got, _, _ := devVars(dir, ""); !reflect.DeepEqual(got, map[string]string{"X": "dev"}) {
		t.Errorf("no env: %q", got)
	}
	w(".dev.vars", "NOEQUALS\n")
	if _, _, err := devVars(dir, ""); err == nil {
		t.Error("a line without = was accepted")
	}
	if _, err := parseVarFlags([]string{"A:b:c", "NOCOLON"}); err == nil {
		t.Error("--var without a colon was accepted")
	}
	if v, _ := parseVarFlags([]string{"A:b:c"}); v["A"] != "b:c" {
		t.Errorf("--var A:b:c gave %q", v)
	}
}

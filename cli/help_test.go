package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestMain lets the test binary stand in for celld (a shell completion
// script calls `celld … --generate-shell-completion`).
func TestMain(m *testing.M) {
	if os.Getenv("CELLD_TEST_RUN_AS_CELLD") == "1" {
		cmd := New("test")
		if err := cmd.Run(context.Background(), os.Args); err != nil {
			os.Exit(ExitCode(err))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := New("test")
	cmd.Writer, cmd.ErrWriter = &out, &errOut
	err := cmd.Run(context.Background(), append([]string{"celld"}, args...))
	return out.String() + errOut.String(), err
}

// Every command, groups included, has a one-line usage and shows
// examples in its --help.
func TestHelp_EveryCommandHasUsageAndExample(t *testing.T) {
	root := New("test")
	root.Writer, root.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	if err := root.Run(context.Background(), []string{"celld", "--help"}); err != nil { // sets the tree up (adds completion)
		t.Fatal(err)
	}
	var paths [][]string
	var walk func(c *cli.Command, path []string)
	walk = func(c *cli.Command, path []string) {
		if c.Name == "help" {
			return
		}
		paths = append(paths, path)
		for _, s := range c.Commands {
			walk(s, append(append([]string(nil), path...), s.Name))
		}
	}
	walk(root, nil)
	if len(paths) < 40 {
		t.Fatalf("walked %d commands; the tree is not what this test expects", len(paths))
	}
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.Join(append([]string{"celld"}, p...), " ")
		seen[name] = true
		out, err := runRoot(t, append(p, "--help")...)
		if err != nil {
			t.Errorf("%s --help: %v", name, err)
			continue
		}
		usage := strings.SplitN(strings.SplitN(out, "\n\n", 2)[0], " - ", 2)
		if len(usage) != 2 || strings.TrimSpace(usage[1]) == "" {
			t.Errorf("%s --help has no usage line:\n%s", name, out)
		}
		_, ex, ok := strings.Cut(out, "Example")
		if !ok || !strings.Contains(ex, "celld") {
			t.Errorf("%s --help shows no example: add one to commandExamples (cli/examples.go)\n%s", name, out)
		}
	}
	for name := range commandExamples {
		if !seen[name] {
			t.Errorf("examples for %q, which is not a command", name)
		}
	}
	for _, want := range []string{"celld completion bash", "celld completion zsh", "celld completion fish", "celld cell export"} {
		if !seen[want] {
			t.Errorf("no command %q", want)
		}
	}
}

// celld completion bash prints a script bash accepts, and with it bash
// completes celld's subcommands by asking celld.
func TestCompletion_Bash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	script, err := runRoot(t, "completion", "bash")
	if err != nil || !strings.Contains(script, "complete ") {
		t.Fatalf("completion bash: %v\n%s", err, script)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "celld.bash")
	os.WriteFile(path, []byte(script), 0o644)
	if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n rejects the script: %v\n%s", err, out)
	}

	// The test binary is celld on PATH for the script to call.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, "celld")); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		// _get_comp_words_by_ref is bash-completion's; use the real one
		// when installed, else the least the script needs of it.
		driver := `
if [ -f /usr/share/bash-completion/bash_completion ]; then . /usr/share/bash-completion/bash_completion
else _get_comp_words_by_ref() { cur="${COMP_WORDS[COMP_CWORD]}"; }; fi
. "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
__celld_bash_autocomplete
printf '%s\n' "${COMPREPLY[@]}"
`
		cmd := exec.Command(bash, append([]string{"-c", driver, "driver", path}, words...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "CELLD_TEST_RUN_AS_CELLD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("complete %q: %v\n%s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("celld", "k"); strings.Join(got, " ") != "kv" {
		t.Errorf("celld k<TAB> = %q, want kv", got)
	}
	if got := strings.Join(complete("celld", "kv", "bulk", ""), " "); got != "put get delete help" {
		t.Errorf("celld kv bulk <TAB> = %q, want put get delete help", got)
	}
	if got := strings.Join(complete("celld", "cell", "e"), " "); got != "export" {
		t.Errorf("celld cell e<TAB> = %q, want export", got)
	}
	if got := complete("celld", "top", "--in"); strings.Join(got, " ") != "--interval" {
		t.Errorf("celld top --in<TAB> = %q, want --interval", got)
	}
}

func TestCompletion_ZshAndFish(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		script, err := runRoot(t, "completion", shell)
		if err != nil || !strings.Contains(script, "celld") || !strings.Contains(script, "--generate-shell-completion") {
			t.Errorf("completion %s: %v\n%s", shell, err, script)
			continue
		}
		if sh, err := exec.LookPath(shell); err == nil && shell == "zsh" {
			path := filepath.Join(t.TempDir(), "_celld")
			os.WriteFile(path, []byte(script), 0o644)
			if out, err := exec.Command(sh, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("zsh -n rejects the script: %v\n%s", err, out)
			}
		}
	}
	if _, err := runRoot(t, "completion", "tcsh"); err == nil {
		t.Error("completion tcsh: no error")
	}
}

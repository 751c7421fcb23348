package main

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/cli"
)

// The packaging files (Dockerfile, packaging/, goreleaser.yaml), tested as
// far as this machine allows: no Docker daemon, no goreleaser.

const repoRoot = "../.."

func readRepo(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// envDefaultMS reads a variable's default from `celld serve --help`.
func envDefaultMS(t *testing.T, name string) time.Duration {
	t.Helper()
	var out bytes.Buffer
	cmd := cli.New("test")
	cmd.Writer, cmd.ErrWriter = &out, &out
	if err := cmd.Run(context.Background(), []string{"celld", "serve", "--help"}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(name + `\s+default (\d+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no default for %s in celld serve --help", name)
	}
	ms, _ := strconv.Atoi(m[1])
	return time.Duration(ms) * time.Millisecond
}

// dockerBuildLine is the Dockerfile's go build command.
func dockerBuildLine(t *testing.T, dockerfile string) string {
	t.Helper()
	for _, l := range strings.Split(dockerfile, "\n") {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, " go build ") {
			return strings.TrimPrefix(l, "RUN ")
		}
	}
	t.Fatal("no RUN … go build line in the Dockerfile")
	return ""
}

// runtimeStage is the Dockerfile's last stage without its COPY lines and
// comments: what the image is at run time.
func runtimeStage(df string) []string {
	var out []string
	for _, l := range strings.Split(df, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "FROM "):
			out = []string{l}
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "COPY "):
		default:
			out = append(out, l)
		}
	}
	return out
}

func TestDockerfile_StaticNonRootWithStateVolume(t *testing.T) {
	df := readRepo(t, "Dockerfile")
	line := dockerBuildLine(t, df)
	for _, want := range []string{"CGO_ENABLED=0 ", "-trimpath", `-ldflags "-s -w -X main.version=${VERSION}"`, "./cmd/celld"} {
		if !strings.Contains(line, want) {
			t.Errorf("Dockerfile build line %q lacks %q", line, want)
		}
	}
	// The release build uses the same flags.
	gr := readRepo(t, "goreleaser.yaml")
	for _, want := range []string{"- CGO_ENABLED=0", "flags: [-trimpath]", "- -s -w -X main.version={{ .Version }}", "main: ./cmd/celld"} {
		if !strings.Contains(gr, want) {
			t.Errorf("goreleaser.yaml lacks %q (the Dockerfile's flags)", want)
		}
	}
	stage := runtimeStage(df)
	joined := strings.Join(stage, "\n")
	if !strings.HasPrefix(stage[0], "FROM gcr.io/distroless/static") {
		t.Errorf("runtime base %q: want a minimal static base", stage[0])
	}
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(joined)
	if user == nil || user[1] == "root" || strings.HasPrefix(user[1], "0") {
		t.Errorf("runtime user %v: want a non-root user", user)
	}
	watch := regexp.MustCompile(`CELLD_WATCH=(\S+)`).FindStringSubmatch(joined)
	vol := regexp.MustCompile(`(?m)^VOLUME \["([^"]+)"\]`).FindStringSubmatch(joined)
	if watch == nil || vol == nil || !strings.HasPrefix(watch[1], vol[1]+"/") {
		t.Errorf("CELLD_WATCH %v is not on the VOLUME %v", watch, vol)
	}
	if !strings.Contains(df, "--chown=65532:65532") || !strings.Contains(joined, "USER 65532:65532") {
		t.Error("the volume's mount point is not owned by the runtime user")
	}
	// goreleaser's image is the same runtime stage around its binary.
	rel := runtimeStage(readRepo(t, "packaging/Dockerfile.release"))
	if strings.Join(rel, "\n") != joined {
		t.Errorf("packaging/Dockerfile.release runtime differs from the Dockerfile's:\n%s\nvs\n%s", strings.Join(rel, "\n"), joined)
	}
	for _, want := range []string{"dockerfile: packaging/Dockerfile.release", "docker_manifests:", "checksum:", "name_template: checksums.txt"} {
		if !strings.Contains(gr, want) {
			t.Errorf("goreleaser.yaml lacks %q", want)
		}
	}
}

// Builds the binary with the Dockerfile's exact command line and checks it
// is static and stamped. A -trimpath build compiles every package again
// (minutes on a busy machine), so it runs with CELLD_TEST_PACKAGING_BUILD=1.
func TestDockerfile_BuildsAStaticBinary(t *testing.T) {
	if os.Getenv("CELLD_TEST_PACKAGING_BUILD") != "1" {
		t.Skip("set CELLD_TEST_PACKAGING_BUILD=1 to build with the Dockerfile's flags")
	}
	line := dockerBuildLine(t, readRepo(t, "Dockerfile"))
	out := filepath.Join(t.TempDir(), "celld")
	line = strings.ReplaceAll(line, "${VERSION}", "v9.8.7-test")
	line = strings.ReplaceAll(line, "/out/celld", out)
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is not static: it has a %v program header", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v", libs)
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary keeps its symbol table (-s not applied)")
	}
	v, err := exec.Command(out, "--version").CombinedOutput()
	if err != nil || string(v) != "celld v9.8.7-test\n" {
		t.Errorf("--version: %q (%v)", v, err)
	}
}

// unitValues reads a systemd unit's Key=Value lines by section.
func unitValues(unit string) map[string]string {
	vals := map[string]string{}
	section := ""
	for _, l := range strings.Split(unit, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			section = strings.Trim(l, "[]")
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			vals[section+"."+k] = v
		}
	}
	return vals
}

func parseSec(t *testing.T, v string) time.Duration {
	t.Helper()
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("time span %q: %v", v, err)
	}
	return d
}

func TestSystemdUnit(t *testing.T) {
	unit := readRepo(t, "packaging/celld.service")
	v := unitValues(unit)
	ttl, drain := envDefaultMS(t, "CELLD_TTL_MS"), envDefaultMS(t, "CELLD_SHUTDOWN_DRAIN_MS")
	if v["Service.Restart"] != "always" {
		t.Errorf("Restart=%q, want always", v["Service.Restart"])
	}
	if rs := parseSec(t, v["Service.RestartSec"]); rs < ttl {
		t.Errorf("RestartSec %s is shorter than the node lease (CELLD_TTL_MS default %s)", rs, ttl)
	}
	if ts := parseSec(t, v["Service.TimeoutStopSec"]); ts < drain+10*time.Second {
		t.Errorf("TimeoutStopSec %s is not well above the drain (CELLD_SHUTDOWN_DRAIN_MS default %s)", ts, drain)
	}
	if v["Service.KillSignal"] != "SIGTERM" || !strings.HasSuffix(v["Service.ExecStart"], "celld serve") || v["Service.User"] == "" || v["Service.User"] == "root" {
		t.Errorf("KillSignal %q, ExecStart %q, User %q", v["Service.KillSignal"], v["Service.ExecStart"], v["Service.User"])
	}
	if !strings.HasPrefix(v["Service.Environment"], "CELLD_WATCH=/var/lib/"+v["Service.StateDirectory"]+"/") {
		t.Errorf("CELLD_WATCH (%q) is not under the StateDirectory %q", v["Service.Environment"], v["Service.StateDirectory"])
	}

	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("no systemd-analyze here: the unit's syntax is not verified")
		return
	}
	// verify checks that ExecStart exists: point it at this test binary.
	self, _ := os.Executable()
	path := filepath.Join(t.TempDir(), "celld.service")
	os.WriteFile(path, []byte(strings.Replace(unit, "ExecStart=/usr/local/bin/celld", "ExecStart="+self, 1)), 0o644)
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// yamlInt finds `key: N` in a manifest.
func yamlInt(t *testing.T, doc, key string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + key + `:\s*(\d+)\s*$`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("no %s in the manifest", key)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestKubernetesExample(t *testing.T) {
	doc := readRepo(t, "packaging/kubernetes/celld.yaml")
	drain := envDefaultMS(t, "CELLD_SHUTDOWN_DRAIN_MS")
	grace := time.Duration(yamlInt(t, doc, "terminationGracePeriodSeconds")) * time.Second
	preStop := time.Duration(yamlInt(t, doc, "seconds")) * time.Second
	if grace <= preStop+drain {
		t.Errorf("terminationGracePeriodSeconds %s is not above the preStop pause %s plus the drain %s", grace, preStop, drain)
	}
	for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
		m := regexp.MustCompile(probe + `:\s*\n\s*httpGet:\s*\n\s*path: (\S+)`).FindStringSubmatch(doc)
		if m == nil || m[1] != "/__celld/health" {
			t.Errorf("%s: %v, want an httpGet on /__celld/health", probe, m)
		}
	}
	live := regexp.MustCompile(`livenessProbe:[\s\S]*?periodSeconds: (\d+)\s*\n\s*failureThreshold: (\d+)`).FindStringSubmatch(doc)
	if live == nil {
		t.Fatal("no liveness period and threshold")
	}
	p, _ := strconv.Atoi(live[1])
	n, _ := strconv.Atoi(live[2])
	if window := time.Duration(p*n) * time.Second; window <= grace {
		t.Errorf("the liveness probe kills after %s of 503s, within a termination (%s): it could kill a draining node", window, grace)
	}
	for _, want := range []string{"value: $(POD_IP):8081", "fieldPath: metadata.name", "mountPath: /var/lib/celld", "runAsNonRoot: true"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the manifest lacks %q", want)
		}
	}
}

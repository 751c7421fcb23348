package cli

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// envVar is a CELLD_* variable the node reads. Every one is validated at
// start: a bad value or a likely typo is an error naming the variable,
// never a silent default.
type envVar struct {
	Name    string
	Default string
	Meaning string
	Min     int64 // for integers
	Max     int64
	Choices []string // for enumerations
}

// envVars is the table shown by `celld serve --help` and the README.
var envVars = []envVar{
	{Name: "CELLD_BUCKET", Meaning: "the fleet's bucket (same as --bucket)"},
	{Name: "CELLD_NODE", Meaning: "node name (same as --node); default: the host name"},
	{Name: "CELLD_ADDR", Default: "127.0.0.1:8080", Meaning: "public listener (same as --listen)"},
	{Name: "CELLD_INTERNAL_ADDR", Default: "127.0.0.1:8081", Meaning: "internal listener for peers and operators (same as --internal-listen)"},
	{Name: "CELLD_ADVERTISE", Meaning: "internal address peers use to reach this node (same as --advertise); default: the internal listener"},
	{Name: "CELLD_TTL_MS", Default: "10000", Meaning: "node lease lifetime in ms; renewed at a third of it", Min: 1000, Max: 600000},
	{Name: "CELLD_SKEW_MARGIN_MS", Default: "5000", Meaning: "a peer counts a node dead this long after its published lease expiry (clock skew allowance); independently of clocks, a lease seen unchanged for TTL + 1% on the peer's own clock counts as dead", Min: 1, Max: 600000},
	{Name: "CELLD_WATCH", Default: ".celld/state/<node>", Meaning: "directory of the resident cells' SQLite files; locked by the node while it runs, so two processes never share one"},
	{Name: "CELLD_IDLE_EVICT_S", Default: "300", Meaning: "stop and release a cell idle this many seconds", Min: 1, Max: 86400},
	{Name: "CELLD_MAX_RESIDENT_CELLS", Default: "0", Meaning: "refuse new activations (503) beyond this many resident cells; 0 = no limit", Min: 0, Max: 10000000},
	{Name: "CELLD_LTX_RETENTION_SECS", Default: "0", Meaning: "delete a cell's LTX history below its newest snapshot once older than this (when it stops, and periodically while resident, also what newer objects cover in its current epoch); 0 = keep all", Min: 0, Max: 315360000},
	{Name: "CELLD_HIBERNATE_S", Default: "10", Meaning: "a Durable Object idle this many seconds drops its JS isolate (memory) but stays resident; its next event re-runs the constructor; 0 = never", Min: 0, Max: 86400},
	{Name: "CELLD_WAKER_TICK_MS", Default: "60000", Meaning: "how often the node holding the waker role scans the due Durable Object alarm wake-ups (wake/entries/) and wakes cells whose owner is gone", Min: 100, Max: 3600000},
	{Name: "CELLD_TEST_CRON_SECONDS", Default: "0", Meaning: "tests only: 1 lets a cron trigger have a leading seconds field (six fields; Cloudflare has none), so a test sees several occurrences in seconds; set it for celld deploy too", Min: 0, Max: 1},
	{Name: "CELLD_QUEUE_LEASE_MS", Default: "300000", Meaning: "how long a queue batch is leased to its consumer's queue() handler; a handler still running then, or whose node died, counts as a failed delivery and the batch is delivered again", Min: 1000, Max: 3600000},
	{Name: "CELLD_MAX_WEBSOCKETS", Default: "0", Meaning: "refuse a WebSocket handshake (503) beyond this many open client WebSockets on the node; 0 = no limit", Min: 0, Max: 10000000},
	{Name: "CELLD_GC_HEAP_MIN_MB", Default: "64", Meaning: "the garbage collector lets the heap grow to at least this many MB between cycles (GOGC 200 above it); 0 = GOGC 200 alone; ignored when GOGC is set", Min: 0, Max: 65536},
	{Name: "CELLD_MAX_CELL_MB", Default: "10240", Meaning: "largest cell database (MiB) a restore rebuilds; an LTX object in the bucket claiming more is refused as corrupt before anything is allocated for it", Min: 1, Max: 16777216},
	{Name: "CELLD_MAX_BODY_MB", Default: "100", Meaning: "largest request body (MiB) the node accepts, enforced while it streams (413); Cloudflare's default limit is 100 MB", Min: 1, Max: 65536},
	{Name: "CELLD_BODY_MEMORY_MB", Default: "512", Meaning: "request-body bytes (MiB) in flight on the node at once, both listeners; a request that finds no room within 10 s gets 503 with Retry-After; at least CELLD_MAX_BODY_MB", Min: 1, Max: 1048576},
	{Name: "CELLD_TAKEOVER_WAIT_MS", Default: "15000", Meaning: "a request for a cell whose owner is gone (lease lapsed, or its address refusing connections) waits up to this long — and at most the owner's remaining lease plus the skew margin — for this node to take the cell over, instead of failing at once; 0 = no wait", Min: 0, Max: 600000},
	{Name: "CELLD_MAX_CONNS", Default: "0", Meaning: "connections each listener holds at most; at the cap a new one displaces the longest idle, and when all are busy up to 64 more answer only health and /state (anything else 503); 0 = a quarter of the file-descriptor limit", Min: 0, Max: 10000000},
	{Name: "CELLD_MAX_OPEN_CELLS", Default: "0", Meaning: "resident cells whose SQLite files (2 descriptors each) are open at once; beyond it the least recently used idle ones close them and reopen them from the local file on their next event (no restore, same epoch); 0 = derived from the file-descriptor limit, what both listeners' CELLD_MAX_CONNS and a reserve leave", Min: 0, Max: 10000000},
	{Name: "CELLD_ASSET_CACHE_BYTES", Default: "536870912", Meaning: "bound of the node's on-disk cache of static asset bodies (least recently used evicted)", Min: 1 << 20, Max: 1 << 50},
	{Name: "CELLD_CACHE_BYTES", Default: "67108864", Meaning: "bound of the node's in-memory Cache API store (caches.default, caches.open), least recently used evicted; an entry over a quarter of it is not stored", Min: 1 << 20, Max: 1 << 40},
	{Name: "CELLD_ASSET_CACHE_DIR", Meaning: "directory of that cache; default: asset-cache-<node> beside CELLD_WATCH"},
	{Name: "CELLD_RELEASES", Default: "128", Meaning: "cell releases in flight at most during a drain", Min: 1, Max: 100000},
	{Name: "CELLD_SHUTDOWN_DRAIN_MS", Default: "25000", Meaning: "a drain (SIGTERM, SIGINT, POST /shutdown) ends after this many ms even if cells remain", Min: 1, Max: 3600000},
	{Name: "CELLD_LOG_FORMAT", Default: "text", Meaning: "log lines on stderr as slog text (key=value) or JSON, one object per line", Choices: []string{"text", "json"}},
	{Name: "CELLD_LOG_LEVEL", Default: "info", Meaning: "least severe log lines written (console.debug is debug, console.log/info info)", Choices: []string{"debug", "info", "warn", "error"}},
	{Name: "CELLD_ACCESS_LOG", Default: "0", Meaning: "1: log one line per public request (method, path, status, duration_ms, bytes, request_id); celld dev always prints them", Choices: []string{"0", "1"}},
	{Name: "CELLD_DURABILITY", Default: "fleet", Meaning: "how a write is proven durable before its output: fleet (every follower fsynced it, upload behind; a node with no follower uses bucket proofs; docs/fleet-durability.md) or bucket (LTX upload + ownership re-check)", Choices: []string{"fleet", "bucket"}},
	{Name: "CELLD_FLEET_UPLOAD_MS", Default: "200", Meaning: "fleet durability: how long a write proven on followers may wait for the bucket; the writes of that window, of every cell of the node, go out as one log pack", Min: 1, Max: 600000},
	{Name: "CELLD_FLEET_TRANSFER_MS", Default: "30000", Meaning: "fleet durability: how long a write in a log pack may wait for its cell's own upload (one merged object per cell per window)", Min: 1, Max: 3600000},
	{Name: "CELLD_RECOVERY_RETRY_MS", Default: "1000", Meaning: "fleet durability: wait between attempts of the takeover recovery gate", Min: 1, Max: 600000},
	{Name: "CELLD_RECOVERY_RETRIES", Default: "240", Meaning: "fleet durability: attempts of the takeover recovery gate before a request for the cell fails", Min: 1, Max: 1000000},
}

// isIntVar reports whether v holds an integer.
func (v envVar) isInt() bool { return v.Max > 0 }

// envInt returns the validated value of an integer variable.
func envInt(name string) (int64, error) {
	for _, v := range envVars {
		if v.Name != name {
			continue
		}
		raw, ok := os.LookupEnv(name)
		raw = strings.TrimSpace(raw)
		if !ok || raw == "" {
			raw = v.Default
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < v.Min || n > v.Max {
			return 0, usageErr("%s=%q: want an integer from %d to %d (default %s)", name, raw, v.Min, v.Max, v.Default)
		}
		return n, nil
	}
	return 0, fmt.Errorf("envInt: %s is not a known variable", name)
}

// checkEnv validates every CELLD_* variable in environ: integers in range,
// and unknown names that look like a typo of a known one (edit distance
// ≤ 2) are refused.
func checkEnv(environ []string) error {
	known := map[string]envVar{}
	for _, v := range envVars {
		known[v.Name] = v
	}
	var problems []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "CELLD_") {
			continue
		}
		if v, ok := known[name]; ok {
			if len(v.Choices) > 0 {
				if val := strings.TrimSpace(os.Getenv(name)); val != "" && !slices.Contains(v.Choices, val) {
					problems = append(problems, fmt.Sprintf("%s=%q: want one of %s", name, val, strings.Join(v.Choices, ", ")))
				}
			}
			if v.isInt() {
				if _, err := envInt(name); err != nil {
					problems = append(problems, err.Error())
				}
			}
			continue
		}
		if near := nearest(name); near != "" {
			problems = append(problems, fmt.Sprintf("unknown variable %s: did you mean %s?", name, near))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return usageErr("%s", strings.Join(problems, "; "))
	}
	return nil
}

func nearest(name string) string {
	best, bestD := "", 3
	for _, v := range envVars {
		if d := editDistance(name, v.Name); d < bestD {
			best, bestD = v.Name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// envTable renders the variables for help text.
func envTable() string {
	var b strings.Builder
	b.WriteString("Environment (every CELLD_* value is validated at start):\n")
	for _, v := range envVars {
		def := v.Default
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(&b, "  %-25s default %-15s %s\n", v.Name, def, v.Meaning)
	}
	return b.String()
}

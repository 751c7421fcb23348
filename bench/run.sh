#!/usr/bin/env bash
# bench/run.sh: the same Workers on workerd and on `celld serve`, driven by
# the same closed-loop load generator (bench/load) over loopback, one server
# at a time.
#
#   hello        examples/hello, GET /
#   counter-read examples/counter (SQLite-backed Durable Object), one write
#                (GET /?name=bench) then load on GET /peek?name=bench (reads)
#   node-base64  bench/apps/node-base64 (nodejs_compat): each request decodes
#                1 MiB with Buffer.from(string, "base64")
#   hono         bench/apps/hono: Hono router, two middlewares, JSON from
#                path and repeated query parameters (GET /users/42?…)
#   hono-do      bench/apps/hono-do: a Hono Worker forwarding to a Durable
#                Object whose fetch is another Hono app doing a SQL read
#                (one POST …/seed, then GET /rooms/lobby/items/7)
#   ssr          bench/apps/ssr: server-side render of 200 rows, no I/O
#
# The framework apps import hono (pinned in bench/apps/package.json,
# installed with npm ci); for workerd they are bundled as one ES module by
# bench/esm (esbuild, as Wrangler does), for celld by `celld deploy`. Both
# runtimes must give the same body, or the run fails.
#
# Prints req/s, p50 and p99 per target and runtime, the celld/workerd ratio
# of req/s and of 1/p50, each server's resident memory after its load, and
# the server's CPU time per request during the measured window (user+system;
# the steadiest of the figures on a machine shared with other work).
#
# Environment (all optional):
#   BENCH_C=32           concurrent keep-alive connections
#   BENCH_D=10s          measured duration (Go duration)
#   BENCH_WARMUP=2s      unmeasured warm-up before it (ms, s or m)
#   BENCH_TARGETS="hello counter hono hono-do ssr"
#   BENCH_RUNTIMES="workerd celld"
#   BENCH_START_S=60     how long a server may take to answer its first request
#   BENCH_LOAD_S=300     hard bound on one load run
#   BENCH_CELLD=path     use this celld binary instead of building ./cmd/celld
#   BENCH_KEEP=1         keep the scratch directory (configs, logs, state)
#   BENCH_SERVER_CPUS=1  pin the server to these CPUs (taskset -c; default: no pinning)
#   BENCH_LOAD_CPUS=0    pin the load generator likewise
#
# celld serve runs its garbage collector at GOGC 200 with a 64 MB floor under
# the heap goal (CELLD_GC_HEAP_MIN_MB); GOGC=100 in the environment measures
# Go's defaults instead.
#
# workerd@1.20261117.1 is installed once with npm into bench/.npm; celld and
# the load tool are built into bench/.bin. Both are gitignored.
set -euo pipefail

WORKERD_VERSION=1.20261117.1
C=${BENCH_C:-32}
D=${BENCH_D:-10s}
WARMUP=${BENCH_WARMUP:-2s}
TARGETS=${BENCH_TARGETS:-hello counter hono hono-do ssr}
RUNTIMES=${BENCH_RUNTIMES:-workerd celld}
START_S=${BENCH_START_S:-60}
LOAD_S=${BENCH_LOAD_S:-300}
SERVER_PIN=()
LOAD_PIN=()
[[ -z ${BENCH_SERVER_CPUS:-} ]] || SERVER_PIN=(taskset -c "$BENCH_SERVER_CPUS")
[[ -z ${BENCH_LOAD_CPUS:-} ]] || LOAD_PIN=(taskset -c "$BENCH_LOAD_CPUS")

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
cd "$ROOT"

log() { printf '%s\n' "$*" >&2; }
die() { log "bench: $*"; exit 1; }

for tool in npm go curl timeout awk; do
	command -v "$tool" >/dev/null || die "$tool is required"
done

# --- tools -------------------------------------------------------------------

WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-linux-64/bin/workerd
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) ;;
Linux-aarch64) WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-linux-arm64/bin/workerd ;;
Darwin-arm64) WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-darwin-arm64/bin/workerd ;;
Darwin-x86_64) WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-darwin-64/bin/workerd ;;
esac
installed=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$BENCH/.npm/node_modules/workerd/package.json" 2>/dev/null || true)
if [[ ! -x $WORKERD || $installed != "$WORKERD_VERSION" ]]; then
	log "installing workerd@$WORKERD_VERSION into bench/.npm (npm $(npm --version))"
	npm install --prefix "$BENCH/.npm" --no-audit --no-fund --loglevel=error "workerd@$WORKERD_VERSION" >&2
fi
[[ -x $WORKERD ]] || WORKERD=$BENCH/.npm/node_modules/.bin/workerd
[[ -x $WORKERD ]] || die "no workerd binary under bench/.npm after npm install"

mkdir -p "$BENCH/.bin"
if [[ -n ${BENCH_CELLD:-} ]]; then
	CELLD=$BENCH_CELLD
else
	log "building celld and the load tool"
	go build -o "$BENCH/.bin/celld" ./cmd/celld
	CELLD=$BENCH/.bin/celld
fi
go build -o "$BENCH/.bin/load" ./bench/load
LOAD=$BENCH/.bin/load
go build -o "$BENCH/.bin/esm" ./bench/esm
ESM=$BENCH/.bin/esm
if [[ " $TARGETS " == *" hono"* || " $TARGETS " == *" ssr "* ]] &&
	! cmp -s "$BENCH/apps/package-lock.json" "$BENCH/apps/node_modules/.package-lock.json"; then
	log "installing the framework apps' packages (npm ci in bench/apps)"
	(cd "$BENCH/apps" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

# app_dir TARGET: the Wrangler project of a target.
app_dir() {
	case $1 in
	hello | counter) echo "examples/$1" ;;
	hono | hono-do | ssr | node-base64) echo "bench/apps/$1" ;;
	*) die "unknown target $1" ;;
	esac
}

# --- scratch, processes, cleanup ---------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/celld-bench.XXXXXX")
SERVER_PID=
SERVER_LOG=/dev/null

stop_server() {
	[[ -n $SERVER_PID ]] || return 0
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$SERVER_PID" 2>/dev/null || true
	fi
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=
}

cleanup() {
	stop_server
	if [[ -n ${BENCH_KEEP:-} ]]; then
		log "scratch kept in $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port prints a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	local p
	for _ in $(seq 200); do
		# Below Linux's ephemeral range (32768-60999): the load tool's own
		# connections take ports there, and a listener cannot bind one.
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

# wait_ready URL LOGFILE: wait until URL answers HTTP at all (any status:
# a server that answers 500 is up, and the body check below names the
# problem), bounded by START_S.
wait_ready() {
	local url=$1 logf=$2 deadline=$((SECONDS + START_S)) code
	while ((SECONDS < deadline)); do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			log "bench: server exited before serving; its log:"
			tail -n 20 "$logf" >&2
			return 1
		fi
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" 2>/dev/null || true)
		# 503: a celld node answers so until its deployment has loaded.
		if [[ -n $code && $code != 000 && $code != 503 ]]; then
			return 0
		fi
		sleep 0.1
	done
	log "bench: $url did not answer within ${START_S}s; server log:"
	tail -n 20 "$logf" >&2
	return 1
}

# rss_kib PID: resident memory of PID and its direct children, in KiB.
rss_kib() {
	local total=0 p v
	for p in "$1" $(ps -o pid= --ppid "$1" 2>/dev/null || true); do
		v=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
		total=$((total + ${v:-0}))
	done
	echo "$total"
}

# seconds DURATION: a Go duration of one unit (500ms, 2s, 1m) in seconds.
seconds() {
	awk -v d="$1" 'BEGIN {
		if (d ~ /ms$/) { sub(/ms$/, "", d); print d / 1000 }
		else if (d ~ /s$/) { sub(/s$/, "", d); print d + 0 }
		else if (d ~ /m$/) { sub(/m$/, "", d); print d * 60 }
		else print d + 0
	}'
}

# cpu_ticks PID: user+system CPU time of PID and its direct children so
# far, in clock ticks.
CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() {
	local total=0 p v
	for p in "$1" $(ps -o pid= --ppid "$1" 2>/dev/null || true); do
		# Fields 14 and 15 (utime, stime), counted after the ") " that ends
		# the command name, which may itself hold spaces.
		v=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}' || true)
		total=$((total + ${v:-0}))
	done
	echo "$total"
}

# --- servers -------------------------------------------------------------------

# workerd_config TARGET PORT DIR: writes DIR/config.capnp for the example,
# embedding the example's src/index.js unchanged (copied next to the config,
# since capnp embeds resolve relative to the config file).
workerd_config() {
	local target=$1 port=$2 dir=$3 fields disk=
	mkdir -p "$dir"
	case $target in
	hello | counter) cp "examples/$target/src/index.js" "$dir/index.js" ;;
	*) "$ESM" -o "$dir/index.js" "$(app_dir "$target")/src/index.js" || die "bundling $target for workerd failed" ;;
	esac
	# The worker's fields beyond its module and compatibility date, as its
	# wrangler.jsonc says; a Durable Object target also gets a local disk.
	case $target in
	hello) fields='bindings = [ (name = "GREETING", text = "Hello") ],' ;; # vars.GREETING
	hono | ssr) fields= ;;
	node-base64) fields='compatibilityFlags = ["nodejs_compat"],' ;;
	counter) # COUNTER -> class Counter, new_sqlite_classes = ["Counter"]
		disk=1
		fields='bindings = [ (name = "COUNTER", durableObjectNamespace = "Counter") ],
  durableObjectNamespaces = [ (className = "Counter", uniqueKey = "counter-Counter", enableSql = true) ],
  durableObjectStorage = (localDisk = "do-disk"),' ;;
	hono-do) # ROOMS -> class Room (SQLite-backed)
		disk=1
		fields='bindings = [ (name = "ROOMS", durableObjectNamespace = "Room") ],
  durableObjectNamespaces = [ (className = "Room", uniqueKey = "bench-Room", enableSql = true) ],
  durableObjectStorage = (localDisk = "do-disk"),' ;;
	*) die "unknown target $target" ;;
	esac
	local services='(name = "main", worker = .worker)'
	if [[ -n $disk ]]; then
		mkdir -p "$dir/do"
		services+=", (name = \"do-disk\", disk = (path = \"$dir/do\", writable = true))"
	fi
	cat >"$dir/config.capnp" <<EOF
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ $services ],
  sockets = [ (name = "http", address = "127.0.0.1:$port", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [ (name = "index.js", esModule = embed "index.js") ],
  compatibilityDate = "2026-04-01",
  $fields
);
EOF
}

# start_server RUNTIME TARGET: starts the server alone, sets SERVER_PID and
# BASE (http://127.0.0.1:PORT), and waits until it answers.
start_server() {
	local runtime=$1 target=$2 port dir
	port=$(free_port)
	dir=$TMP/$runtime-$target
	mkdir -p "$dir"
	SERVER_LOG=$dir/server.log
	BASE=http://127.0.0.1:$port
	case $runtime in
	workerd)
		workerd_config "$target" "$port" "$dir"
		"${SERVER_PIN[@]}" "$WORKERD" serve "$dir/config.capnp" >"$dir/server.log" 2>&1 &
		SERVER_PID=$!
		;;
	celld)
		local ip
		ip=$(free_port)
		export CELLD_BUCKET=file://$dir/bucket
		"$CELLD" deploy "$(app_dir "$target")" >"$dir/deploy.log" 2>&1 ||
			{ cat "$dir/deploy.log" >&2; die "celld deploy $(app_dir "$target") failed"; }
		CELLD_WATCH=$dir/state CELLD_NODE=bench \
			"${SERVER_PIN[@]}" "$CELLD" serve --listen "127.0.0.1:$port" --internal-listen "127.0.0.1:$ip" >"$dir/server.log" 2>&1 &
		SERVER_PID=$!
		unset CELLD_BUCKET
		;;
	*) die "unknown runtime $runtime" ;;
	esac
	# hello answers any path; the counter's / writes, so probe with /peek.
	local probe=$BASE/
	[[ $target == counter ]] && probe="$BASE/peek?name=probe"
	wait_ready "$probe" "$dir/server.log"
}

# --- run -----------------------------------------------------------------------

declare -A RPS P50 P99 RSS ERRS BODY CPU

# get URL: prints the body of one GET; on a non-2xx answer or a transport
# failure it names the status and body, shows the server log's tail and fails.
get() {
	local out code
	out=$(curl -sS --max-time 10 -w '\n%{http_code}' "$1" 2>&1) || true
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	if [[ $code != 2?? ]]; then
		log "bench: GET $1 -> status ${code:-none}: $(head -c 300 <<<"$out")"
		log "bench: server log (last 5 lines):"
		tail -n 5 "$SERVER_LOG" | cut -c 1-400 >&2
		return 1
	fi
	printf '%s' "$out"
}

# post URL: like get, with an empty POST.
post() {
	local out code
	out=$(curl -sS --max-time 10 -X POST -w '\n%{http_code}' "$1" 2>&1) || true
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	if [[ $code != 2?? ]]; then
		log "bench: POST $1 -> status ${code:-none}: $(head -c 300 <<<"$out")"
		tail -n 5 "$SERVER_LOG" | cut -c 1-400 >&2
		return 1
	fi
	printf '%s' "$out"
}

bench_one() {
	local runtime=$1 target=$2 path body out
	log ""
	log "== $target on $runtime"
	if ! start_server "$runtime" "$target"; then
		stop_server
		return 1
	fi
	case $target in
	hello)
		path=/
		body=$(get "$BASE/") || { stop_server; return 1; }
		[[ $body == "Hello from celld! You asked for /" ]] ||
			{ log "bench: unexpected hello body: $body"; stop_server; return 1; }
		;;
	counter)
		path="/peek?name=bench"
		# One write creates the counter; the load only reads it.
		body=$(get "$BASE/?name=bench") || { stop_server; return 1; }
		[[ $body == 1 ]] || { log "bench: first write returned '$body', want 1"; stop_server; return 1; }
		body=$(get "$BASE/peek?name=bench") || { stop_server; return 1; }
		[[ $body == 1 ]] || { log "bench: /peek returned '$body', want 1"; stop_server; return 1; }
		;;
	hono)
		path="/users/42?fields=id,name,role&tag=a&tag=b"
		body=$(get "$BASE$path") || { stop_server; return 1; }
		[[ $body == *'"name":"user-42"'* ]] || { log "bench: unexpected hono body: $body"; stop_server; return 1; }
		;;
	hono-do)
		path=/rooms/lobby/items/7
		post "$BASE/rooms/lobby/seed" >/dev/null || { stop_server; return 1; }
		body=$(get "$BASE$path") || { stop_server; return 1; }
		[[ $body == *'"title":"item 7"'* ]] || { log "bench: unexpected hono-do body: $body"; stop_server; return 1; }
		;;
	node-base64)
		path=/
		body=$(get "$BASE$path") || { stop_server; return 1; }
		[[ $body == "1048576:30" ]] || { log "bench: unexpected node-base64 body: $body"; stop_server; return 1; }
		;;
	ssr)
		path=/
		body=$(get "$BASE$path") || { stop_server; return 1; }
		[[ $body == '<!doctype html>'*'</html>' ]] || { log "bench: unexpected ssr body: $(head -c 200 <<<"$body")"; stop_server; return 1; }
		;;
	esac
	log "   $BASE$path -> $(printf '%q' "$(head -c 160 <<<"$body")")"
	BODY[$target/$runtime]=$body
	# The server's CPU time is read when the warm-up ends and after the
	# load: CPU per request barely moves when other processes compete for
	# the machine, unlike req/s.
	local outf=$TMP/load.out cpu0 cpu1
	timeout "$LOAD_S" "${LOAD_PIN[@]}" "$LOAD" -url "$BASE$path" -c "$C" -d "$D" -warmup "$WARMUP" >"$outf" &
	local load_pid=$!
	sleep "$(seconds "$WARMUP")"
	cpu0=$(cpu_ticks "$SERVER_PID")
	if ! wait "$load_pid"; then
		log "bench: load run failed"
		stop_server
		return 1
	fi
	cpu1=$(cpu_ticks "$SERVER_PID")
	out=$(cat "$outf")
	RSS[$target/$runtime]=$(rss_kib "$SERVER_PID")
	# A read after the load must still see the one write.
	if [[ $target == counter ]]; then
		body=$(get "$BASE/peek?name=bench") || body="(failed)"
		[[ $body == 1 ]] || log "bench: WARNING: /peek after the load returned '$body', want 1"
	fi
	stop_server
	log "   $out"
	RPS[$target/$runtime]=$(jnum "$out" rps)
	P50[$target/$runtime]=$(jnum "$out" p50_us)
	P99[$target/$runtime]=$(jnum "$out" p99_us)
	ERRS[$target/$runtime]=$(jnum "$out" errors)
	CPU[$target/$runtime]=$(awk -v t=$((cpu1 - cpu0)) -v hz="$CLK_TCK" -v n="$(jnum "$out" reqs)" \
		'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else print "n/a" }')
}

# jnum JSON KEY: a numeric field of the load tool's one-line JSON.
jnum() { sed -n "s/.*\"$2\":\([0-9.eE+-]*\).*/\1/p" <<<"$1"; }

log "load: -c $C -d $D -warmup $WARMUP; $(nproc) CPUs (server pinned: ${BENCH_SERVER_CPUS:-no}, load pinned: ${BENCH_LOAD_CPUS:-no}); workerd $("$WORKERD" --version 2>/dev/null | awk '{print $2}'); celld $("$CELLD" --version | awk '{print $2}')"
failed=0
for target in $TARGETS; do
	for runtime in $RUNTIMES; do
		bench_one "$runtime" "$target" || {
			failed=1
			log "bench: $target on $runtime FAILED"
		}
	done
done

# The same sources must answer the same on both runtimes.
for target in $TARGETS; do
	c=${BODY[$target/celld]:-} w=${BODY[$target/workerd]:-}
	if [[ -n $c && -n $w && $c != "$w" ]]; then
		log "bench: $target answers differently: celld $(head -c 200 <<<"$c") vs workerd $(head -c 200 <<<"$w")"
		failed=1
	fi
done

# --- report --------------------------------------------------------------------

fmt_ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }
fmt_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo
printf '%-13s %-8s %10s %9s %9s %7s %9s %11s\n' target runtime "req/s" "p50 ms" "p99 ms" errors "RSS MiB" "CPU us/req"
for target in $TARGETS; do
	for runtime in $RUNTIMES; do
		k=$target/$runtime
		name=$target
		[[ $target == counter ]] && name=counter-read
		if [[ -n ${RPS[$k]:-} ]]; then
			printf '%-13s %-8s %10.0f %9s %9s %7s %9s %11s\n' "$name" "$runtime" "${RPS[$k]}" \
				"$(fmt_ms "${P50[$k]}")" "$(fmt_ms "${P99[$k]}")" "${ERRS[$k]}" "$(fmt_mib "${RSS[$k]}")" "${CPU[$k]}"
		else
			printf '%-13s %-8s %10s\n' "$name" "$runtime" FAILED
		fi
	done
done
echo
printf '%-13s %18s %22s\n' target "req/s celld/wd" "1/p50 celld/wd"
for target in $TARGETS; do
	name=$target
	[[ $target == counter ]] && name=counter-read
	c=$target/celld w=$target/workerd
	if [[ -n ${RPS[$c]:-} && -n ${RPS[$w]:-} ]]; then
		awk -v n="$name" -v cr="${RPS[$c]}" -v wr="${RPS[$w]}" -v cp="${P50[$c]}" -v wp="${P50[$w]}" 'BEGIN {
			r = (wr > 0) ? sprintf("%.2fx", cr / wr) : "n/a"
			l = (cp > 0) ? sprintf("%.2fx", wp / cp) : "n/a"
			printf "%-13s %18s %22s\n", n, r, l
		}'
	else
		printf '%-13s %18s %22s\n' "$name" n/a n/a
	fi
done
exit "$failed"

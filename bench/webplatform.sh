#!/usr/bin/env bash
# bench/webplatform.sh: WebCrypto and CompressionStream hot paths on celld
# and on workerd in the same run: SHA-256 of 1 MiB, HMAC-SHA256 sign of
# 1 KiB, RSA-2048 verify, ECDSA P-256 sign, gzip of 1 MiB through
# CompressionStream, Buffer.from(string, "base64") of 1 MiB. Each op runs N
# times inside one request (bench/webplatform/index.js); the time of a
# request with n=0 (the setup: key generation, buffers) is subtracted, and
# the best of BENCH_REPS requests is kept. The server's CPU time (user +
# system, from /proc) over the same requests gives CPU µs per op. A round
# runs every op on workerd, then on celld; BENCH_RUNS rounds are made and
# each prints its table; at the end the min and median of workerd/celld
# per op over the rounds (above 1.0: celld is faster), of wall time and of
# CPU time (the steadier figure when other work shares the machine).
#
# Environment: BENCH_REPS=3, BENCH_RUNS=1, BENCH_SCALE=1 (multiplies every
# N), BENCH_OPS (a space-separated subset of the op names below),
# BENCH_CELLD=path (a prebuilt celld), BENCH_SERVER_CPUS (taskset -c list).
# workerd comes from npm into bench/.npm, as in bench/run.sh.
set -euo pipefail

WORKERD_VERSION=1.20261117.1
REPS=${BENCH_REPS:-3}
RUNS=${BENCH_RUNS:-1}
SCALE=${BENCH_SCALE:-1}
PIN=()
[[ -z ${BENCH_SERVER_CPUS:-} ]] || PIN=(taskset -c "$BENCH_SERVER_CPUS")
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
cd "$ROOT"
log() { printf '%s\n' "$*" >&2; }
die() { log "bench: $*"; exit 1; }
for tool in npm go curl awk timeout; do command -v "$tool" >/dev/null || die "$tool is required"; done

WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-linux-64/bin/workerd
[[ "$(uname -m)" == aarch64 ]] && WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-linux-arm64/bin/workerd
installed=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$BENCH/.npm/node_modules/workerd/package.json" 2>/dev/null || true)
if [[ ! -x $WORKERD || $installed != "$WORKERD_VERSION" ]]; then
	log "installing workerd@$WORKERD_VERSION into bench/.npm"
	npm install --prefix "$BENCH/.npm" --no-audit --no-fund --loglevel=error "workerd@$WORKERD_VERSION" >&2
fi
[[ -x $WORKERD ]] || WORKERD=$BENCH/.npm/node_modules/.bin/workerd
mkdir -p "$BENCH/.bin"
CELLD=${BENCH_CELLD:-}
if [[ -z $CELLD ]]; then
	go build -o "$BENCH/.bin/celld" ./cmd/celld
	CELLD=$BENCH/.bin/celld
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/celld-bench-wp.XXXXXX")
PID=
stop() {
	[[ -n $PID ]] || return 0
	kill -TERM "$PID" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
	PID=
}
trap 'stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	die "no free port"
}
# wait_ready NAME: 0 once the server answers; 1 if it exited (a port
# taken meanwhile: start tries again).
wait_ready() {
	for _ in $(seq 600); do
		kill -0 "$PID" 2>/dev/null || { tail -5 "$TMP/$1.log" >&2; PID=; return 1; }
		[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/?op=none" || true) == 404 ]] && return 0
		sleep 0.1
	done
	die "$1 did not start"
}

start() {
	local try
	for try in 1 2 3; do
		start_once "$1" && return 0
		log "bench: $1 did not start (try $try of 3)"
	done
	die "$1 did not start"
}
start_once() {
	local port
	port=$(free_port)
	BASE=http://127.0.0.1:$port
	case $1 in
	workerd)
		cp bench/webplatform/index.js "$TMP/index.js"
		cat >"$TMP/config.capnp" <<CAPNP
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:$port", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "index.js", esModule = embed "index.js") ],
  compatibilityDate = "2026-04-01",
  compatibilityFlags = ["nodejs_compat"],
);
CAPNP
		"${PIN[@]}" "$WORKERD" serve "$TMP/config.capnp" >"$TMP/workerd.log" 2>&1 &
		PID=$!
		;;
	celld)
		export CELLD_BUCKET=file://$TMP/bucket
		"$CELLD" deploy bench/webplatform >"$TMP/deploy.log" 2>&1 || { cat "$TMP/deploy.log" >&2; die "deploy failed"; }
		"${PIN[@]}" "$CELLD" serve --node bench --listen "127.0.0.1:$port" --internal-listen "127.0.0.1:$(free_port)" >"$TMP/celld.log" 2>&1 &
		PID=$!
		;;
	esac
	wait_ready "$1"
}

# cpu: the server's CPU time so far in clock ticks (user + system, all
# threads).
TICK=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }

# best OP N: sets BEST to the least wall time (s) of REPS requests and
# CPUT to the server's CPU ticks over all of them.
best() {
	local b="" t c0
	c0=$(cpu)
	for _ in $(seq "$REPS"); do
		t=$(timeout 300 curl -s -o /dev/null -w '%{time_total}' "$BASE/?op=$1&n=$2")
		b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (a == "" || t < a) ? t : a }')
	done
	CPUT=$(($(cpu) - c0))
	BEST=$b
}

ALL_OPS=(sha256:400 hmac:100000 rsaverify:10000 ecdsasign:10000 gzip:60 base64:400)
OPS=()
for spec in "${ALL_OPS[@]}"; do
	[[ -z ${BENCH_OPS:-} || " $BENCH_OPS " == *" ${spec%%:*} "* ]] && OPS+=("$spec")
done
((${#OPS[@]})) || die "BENCH_OPS names no op (have: ${ALL_OPS[*]%%:*})"
label() {
	case $1 in
	sha256) echo "SHA-256 of 1 MiB" ;; hmac) echo "HMAC-SHA256 sign of 1 KiB" ;;
	rsaverify) echo "RSA-2048 verify (PKCS1 v1.5)" ;; ecdsasign) echo "ECDSA P-256 sign" ;;
	gzip) echo "gzip 1 MiB (CompressionStream)" ;; base64) echo "Buffer.from(base64) of 1 MiB" ;;
	esac
}
declare -A PER CPUPER RATIOS CRATIOS
for run in $(seq "$RUNS"); do
	for rt in workerd celld; do
		start "$rt"
		curl -s -o /dev/null "$BASE/?op=hmac&n=100" # warm up
		for spec in "${OPS[@]}"; do
			op=${spec%%:*}
			n=$((${spec#*:} * SCALE))
			best "$op" 0
			t0=$BEST c0=$CPUT
			best "$op" "$n"
			tn=$BEST cn=$CPUT
			PER[$rt.$op]=$(awk -v a="$tn" -v b="$t0" -v n="$n" 'BEGIN { v = (a - b) / n * 1e6; print (v > 0 ? v : 0.001) }')
			CPUPER[$rt.$op]=$(awk -v a="$cn" -v b="$c0" -v n="$n" -v r="$REPS" -v k="$TICK" 'BEGIN { v = (a - b) / k / r / n * 1e6; print (v > 0 ? v : 0) }')
			log "$rt $op: n=$n ${tn}s (setup ${t0}s)"
		done
		stop
	done
	printf '\nround %d of %d (load %s)\n' "$run" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-32s %13s %13s %8s %13s %13s %8s\n' "op" "workerd µs/op" "celld µs/op" "ratio" "workerd cpu" "celld cpu" "ratio"
	for spec in "${OPS[@]}"; do
		op=${spec%%:*}
		r=$(awk -v w="${PER[workerd.$op]}" -v c="${PER[celld.$op]}" 'BEGIN { printf "%.2f", w / c }')
		cr=$(awk -v w="${CPUPER[workerd.$op]}" -v c="${CPUPER[celld.$op]}" 'BEGIN { printf "%.2f", (c > 0 ? w / c : 0) }')
		RATIOS[$op]="${RATIOS[$op]:-} $r"
		CRATIOS[$op]="${CRATIOS[$op]:-} $cr"
		awk -v l="$(label "$op")" -v w="${PER[workerd.$op]}" -v c="${PER[celld.$op]}" -v wc="${CPUPER[workerd.$op]}" -v cc="${CPUPER[celld.$op]}" -v r="$r" -v cr="$cr" \
			'BEGIN { printf "%-32s %13.1f %13.1f %8s %13.1f %13.1f %8s\n", l, w, c, r, wc, cc, cr }'
	done
done

# summary KIND NAME: min, median and every value of NAME (RATIOS or
# CRATIOS) per op.
summary() {
	local -n vals=$2
	printf '\nworkerd/celld, %s, over %d rounds\n%-32s %8s %8s   %s\n' "$1" "$RUNS" "op" "min" "median" "all"
	for spec in "${OPS[@]}"; do
		op=${spec%%:*}
		# shellcheck disable=SC2086
		printf '%s\n' ${vals[$op]} | sort -g | awk -v l="$(label "$op")" -v all="${vals[$op]# }" '
			{ v[NR] = $1 }
			END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%-32s %8.2f %8.2f   %s\n", l, v[1], m, all }'
	done
}
if ((RUNS > 1)); then
	summary "wall time" RATIOS
	summary "CPU time" CRATIOS
fi

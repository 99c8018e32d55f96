# Shared by speed-vs-redisbloom.sh and growth-vs-redisbloom.sh (sourced, not run): starting and
# stopping the two servers, redis-benchmark figures, medians, the machine
# header and the targets' table. docs/serve.md, "Benchmarks against RedisBloom", describes the scripts.
#
# The server flags that change with the write-ahead log are variables, set
# in the environment to override:
#   BK_FLAGS        durability flags of bloomkit serve, the same durability as
#                   RB_FLAGS (-fsync everysec: the write-ahead log fsynced
#                   every -fsync-interval, 1 s)
#   BK_EXTRA        any other bloomkit serve flags
#   RB_FLAGS        redis-server's durability (appendonly yes, everysec)
#   BK_CHECKPOINT_INFO  regex of the INFO line counting bloomkit's checkpoints
#   BK_REPLAY_INFO      regex of the INFO line giving the replay time at start
BK_FLAGS=${BK_FLAGS:--fsync everysec -fsync-interval 1s}
BK_EXTRA=${BK_EXTRA:-}
RB_FLAGS=${RB_FLAGS:---appendonly yes --appendfsync everysec}
BK_CHECKPOINT_INFO=${BK_CHECKPOINT_INFO:-^wal_checkpoints:}
BK_REPLAY_INFO=${BK_REPLAY_INFO:-^wal_replay_ms_at_start:}
PORT=${PORT:-17400}

# script_args NAME BLOOMKIT REDISBLOOM_SO [WORKDIR] sets BK, SO and W (the
# work folder, a new one in /var/tmp by default), as absolute paths.
script_args() {
	local name=$1
	shift
	BK=$(realpath "${1:?usage: $name.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]}")
	SO=$(realpath "${2:?usage: $name.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]}")
	W=${3:-$(mktemp -d "/var/tmp/bloomkit-$name.XXXXXX")}
	mkdir -p "$W"
	W=$(realpath "$W")
}
HOST=127.0.0.1

# Server processes this script started, stopped at exit (by their ids).
STARTED_PIDS=()
cleanup_servers() {
	local p
	for p in "${STARTED_PIDS[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	true
}

# wait_ping PORT PID: wait until the server PID answers PING on PORT (Redis
# answers -LOADING while it loads, which is not PONG); fail if it exits.
wait_ping() {
	local i
	for i in $(seq 1 12000); do
		[ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ] && return 0
		if ! kill -0 "$2" 2>/dev/null; then
			echo "the server on port $1 exited (logs in $W)" >&2
			tail -5 "$W/bloomkit.log" "$W/redis.log" >&2 2>/dev/null || true
			return 1
		fi
		sleep 0.05
	done
	echo "no server answered on port $1" >&2
	return 1
}

# bk_start DIR PORT [PIN]: start bloomkit serve over DIR (PIN: a taskset
# CPU list, empty for none); sets BKPID.
bk_start() {
	local pin=()
	[ -n "${3:-}" ] && pin=(taskset -c "$3")
	# shellcheck disable=SC2086
	"${pin[@]}" "$BK" serve -dir "$1" -addr $HOST:"$2" $BK_FLAGS $BK_EXTRA 2>>"$W/bloomkit.log" &
	BKPID=$!
	STARTED_PIDS+=("$BKPID")
	wait_ping "$2" "$BKPID"
}

# rb_start DIR PORT [PIN]: start redis-server with RedisBloom over DIR
# (its AOF there); sets RBPID.
rb_start() {
	local pin=()
	[ -n "${3:-}" ] && pin=(taskset -c "$3")
	mkdir -p "$1"
	# shellcheck disable=SC2086
	"${pin[@]}" redis-server --port "$2" --bind $HOST --dir "$1" --save '' $RB_FLAGS \
		--loadmodule "$SO" --daemonize no --logfile "$W/redis.log" &
	RBPID=$!
	STARTED_PIDS+=("$RBPID")
	wait_ping "$2" "$RBPID"
}

# stop PID [SIGNAL]: stop a server this script started and wait for it.
stop() {
	kill -"${2:-TERM}" "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# rb_settle PORT: wait until Redis has no AOF rewrite running or scheduled
# (the rewrite's child writes count for the parent only once it is reaped).
rb_settle() {
	local i s
	for i in $(seq 1 12000); do
		s=$(redis-cli -p "$1" INFO persistence | tr -d '\r' | grep -E '^aof_rewrite_(in_progress|scheduled):1' || true)
		[ -z "$s" ] && return 0
		sleep 0.05
	done
}

# rps PORT REDIS-BENCHMARK-ARGS...: requests per second of one redis-benchmark run.
rps() {
	local port=$1 pin=()
	shift
	[ -n "${GEN_CPUS:-}" ] && pin=(taskset -c "$GEN_CPUS")
	"${pin[@]}" redis-benchmark -h $HOST -p "$port" --csv "$@" 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"'
}

# num X: X as an integer (sizes may be given as 1e7).
num() { awk -v x="$1" 'BEGIN { printf "%.0f\n", x }'; }

# median VALUES...: the median (the lower middle one of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# io_written PID: bytes the process (and its reaped children) caused to be
# written to storage: /proc/PID/io write_bytes, counted when a page is
# dirtied (a page of a mapping dirtied again after each sync counts again),
# less cancelled_write_bytes (dirty pages of a file removed before written).
io_written() { awk '/^write_bytes:/ {w = $2} /^cancelled_write_bytes:/ {c = $2} END {print w - c}' "/proc/$1/io"; }

# cpu_ticks PID: user+system clock ticks of a process.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# info_num PORT REGEX: the number after the first INFO line matching REGEX
# (empty when none does).
info_num() {
	redis-cli -p "$1" INFO 2>/dev/null | tr -d '\r' | grep -E -m1 "$2" | sed -E 's/^[^:]*:([0-9.]+).*/\1/' || true
}

# info_seconds PORT REGEX: the first INFO line matching REGEX as seconds: a
# field named *_ms* is in milliseconds, *_us* in microseconds, else seconds
# (a trailing unit, as in 1.25s or 1250ms, is read too); empty when none.
info_seconds() {
	redis-cli -p "$1" INFO 2>/dev/null | tr -d '\r' | grep -E -m1 "$2" | awk -F: '{
		v = $2 + 0; name = $1
		if (name ~ /_ms/ || $2 ~ /ms$/) v /= 1000; else if (name ~ /_us/ || $2 ~ /us$/) v /= 1e6
		printf "%.6f\n", v
	}' || true
}

# fill_rb PORT KEY N: BF.MADD the items 000000000000..N-1 (12 digits, as
# redis-benchmark's __rand_int__) into KEY, 1,000 a call, through redis-cli --pipe.
fill_rb() {
	awk -v n="$3" -v key="$2" 'BEGIN {
		for (s = 0; s < n; s += 1000) {
			m = (n - s < 1000) ? n - s : 1000
			printf "*%d\r\n$7\r\nBF.MADD\r\n$%d\r\n%s\r\n", m + 2, length(key), key
			for (i = s; i < s + m; i++) printf "$12\r\n%012d\r\n", i
		}
	}' | redis-cli -p "$1" --pipe >/dev/null
}

# items12 N: the same items, one a line, for bloomkit build.
items12() { seq -f '%012.0f' 0 $(($1 - 1)); }

# madd_args N: N times __rand_int__ (one BF.MADD's items for redis-benchmark).
madd_args() { printf '__rand_int__ %.0s' $(seq 1 "$1"); }

# machine_header: what the figures were taken on.
machine_header() {
	echo "# machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'))," \
		"kernel $(uname -r), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# $(redis-server --version | cut -d' ' -f1-3), RedisBloom $SO; bloomkit $BK (scripts at $(cd "$(dirname "$0")" && git describe --always --dirty 2>/dev/null || echo "?"))"
	echo "# bloomkit serve flags: $BK_FLAGS $BK_EXTRA; redis-server flags: $RB_FLAGS"
	echo "# workdir $W ($(df -PT "$W" | awk 'NR==2 {print $2}'))"
}

# Rows of the targets' table, printed at the end by print_table.
TABLE=()
# row NAME BLOOMKIT REDISBLOOM RATIO TARGET PASS
row() { TABLE+=("| $1 | $2 | $3 | $4 | $5 | $6 |"); echo "  -> $1: bloomkit $2, RedisBloom $3, bk better × $4 ($5: $6)"; }
print_table() {
	echo
	echo "| row | bloomkit | RedisBloom | bk better × | target | pass |"
	echo "|---|--:|--:|--:|---|---|"
	printf '%s\n' "${TABLE[@]}"
}

# ratio A B: A / B to 2 decimals ("—" when either is missing or B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "—"; else printf "%.2f\n", a / b }'; }
# verdict EXPR: pass or FAIL of an awk condition on numbers (FAIL when it cannot be evaluated).
verdict() { awk "BEGIN { exit !($1) }" 2>/dev/null && echo pass || echo FAIL; }

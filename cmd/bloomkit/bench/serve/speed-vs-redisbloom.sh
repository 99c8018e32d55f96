#!/usr/bin/env bash
# Speed: bloomkit serve against redis-server + RedisBloom on the
# same machine, same items, same durability (RedisBloom: appendonly yes,
# appendfsync everysec), each case alternating the two servers ALTS times
# (3), medians, a ratio per row and the targets' table at the end.
#
#   lookups   BF.EXISTS hits, -c 50 -P 16, on a SMALL-item (1e5) and a
#             BIG-item (1e8, 124 MB) filter at p = 0.01, driven by
#             redis-benchmark and by bench/firehose (LOOKUP_GENS), each with
#             the server's CPU use and its requests per CPU-second; -c 1
#             (redis-benchmark) on the small one. With PIN=1 (the default on 2 or more CPUs) each
#             server runs on CPU 0 alone and redis-benchmark on CPU 1: one core
#             each, as RedisBloom executes commands on one thread (PIN=0: all
#             three share every CPU, and the generator takes its share from
#             the server that uses both cores)
#   madd      BF.MADD of 1,000 items a call, 16 pipelined, into a reserved
#             MADD_CAP (1e8) NONSCALING filter: items/s, bytes written to disk
#             per item (/proc/PID/io write_bytes), checkpoints from INFO
#   restart   a RESTART_CAP filter (8.6e8: 1 GB) and RESTART_ITEMS adds
#             (1.3e8: a 1 GB digest log) written through the server with
#             checkpoints off (BK_NOCHECKPOINT), then kill -9; time from the
#             start to the first answer, and the replay rate
#   scaling   BF.EXISTS -c 50 -P 16 on the small filter with the server pinned
#             to CPU 0 (load generator pinned to CPU 1) against the server on
#             every CPU (generator unpinned: it shares the cores); CPU shares
#             of both printed
#
# Usage: speed-vs-redisbloom.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]
#   QUICK=1      small sizes, one alternation (a smoke run: under a minute)
#   CASES="lookups madd restart scaling"   the cases to run
#   BIG=1e7      a quicker run of the large lookup filter
# Every size and flag is a variable below (set it in the environment).
# WORKDIR must be on a disk (not tmpfs): write_bytes counts only real writes.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
script_args speed-vs-redisbloom "$@"

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	: "${ALTS:=1}" "${SMALL:=100000}" "${BIG:=1000000}" "${N_P16:=100000}" "${N_C1:=5000}"
	: "${MADD_CAP:=1000000}" "${MADD_ITEMS:=200000}" "${RESTART_CAP:=1000000}" "${RESTART_ITEMS:=200000}"
	: "${SETTLE:=1.5}"
fi
ALTS=${ALTS:-3}                   # alternations of the two servers per case
SMALL=${SMALL:-100000}            # items of the small lookup filter
BIG=${BIG:-100000000}             # items of the large lookup filter (1e7 for a quicker run)
N_P16=${N_P16:-2000000}           # requests of a -c 50 -P 16 run
N_C1=${N_C1:-200000}              # requests of a -c 1 run
MADD_CAP=${MADD_CAP:-100000000}   # capacity of the BF.MADD filter (reserved NONSCALING)
MADD_ITEMS=${MADD_ITEMS:-30000000} # items added per alternation (≤ MADD_CAP)
MADD_C=${MADD_C:-1}               # redis-benchmark connections for BF.MADD
MADD_P=${MADD_P:-16}              # BF.MADD calls pipelined
RESTART_CAP=${RESTART_CAP:-860000000}     # capacity of the restart filter (8.6e8 at 1%: 1 GB)
RESTART_ITEMS=${RESTART_ITEMS:-130000000} # adds written to its log (8 bytes each: 1 GB)
RESTART_RB=${RESTART_RB:-1}       # also time RedisBloom's restart from its AOF of the same adds
SETTLE=${SETTLE:-3}               # seconds waited after adds for the last everysec sync
BK_NOCHECKPOINT=${BK_NOCHECKPOINT:--checkpoint-bytes 1TiB -checkpoint-interval 1000h} # bloomkit flags that keep checkpoints off while the log is written
BK_STOP_SIGNAL=${BK_STOP_SIGNAL:-KILL} # how the server stops before the restart (KILL: the log is replayed)
CASES=${CASES:-lookups madd restart scaling}
for v in SMALL BIG N_P16 N_C1 MADD_CAP MADD_ITEMS RESTART_CAP RESTART_ITEMS; do printf -v "$v" %s "$(num "${!v}")"; done
BKP=$PORT RBP=$((PORT + 1))
trap cleanup_servers EXIT

echo "# issue 32: bloomkit serve against RedisBloom, medians of $ALTS alternation(s)$([ "$QUICK" = 1 ] && echo ' (QUICK: smoke sizes, not results)')"
machine_header

has_case() { [[ " $CASES " == *" $1 "* ]]; }

# ---------------------------------------------------------------- lookups
if has_case lookups; then
	echo "## lookups: BF.EXISTS hits on $SMALL- and $BIG-item filters (p = 0.01)"
	mkdir -p "$W/lookups/bk"
	for n in $SMALL $BIG; do
		f="$W/lookups/bk/hits$n.bloom"
		[ -f "$f" ] || items12 "$n" | "$BK" build -variant partitioned -n "$n" -p 0.01 -o "$f" >/dev/null 2>&1
	done
	rm -rf "$W/lookups/rb"
	PIN=${PIN:-$([ "$(nproc)" -ge 2 ] && echo 1 || echo 0)}
	srv_cpu=""
	if [ "$PIN" = 1 ]; then
		srv_cpu=0
		echo "  pinned: each server on CPU 0, redis-benchmark on CPU 1"
	fi
	bk_start "$W/lookups/bk" $BKP $srv_cpu
	rb_start "$W/lookups/rb" $RBP $srv_cpu
	for n in $SMALL $BIG; do
		redis-cli -p $RBP BF.RESERVE "hits$n" 0.01 "$n" NONSCALING >/dev/null
		fill_rb $RBP "hits$n" "$n"
	done
	echo "  filters: bloomkit $(redis-cli -p $BKP BF.INFO hits$BIG SIZE | tr '\n' ' ')bytes, RedisBloom $(redis-cli -p $RBP BF.INFO hits$BIG SIZE | tr '\n' ' ')bytes for $BIG items"
	FH="$W/firehose"
	(cd "$HERE/firehose" && go build -o "$FH" .)
	gen_cpus=0-$(($(nproc) - 1))
	[ -n "$srv_cpu" ] && gen_cpus=1
	# gen_rate PID GEN N REDIS-BENCHMARK-ARGS...: "requests/s server-CPU%"
	# of one run of GEN (redis-benchmark or firehose) against the server
	# PID (its port from the pid), the server's CPU in % of one core (user +
	# system time over the run's wall time).
	gen_rate() {
		local pid=$1 gen=$2 n=$3 port s0 s1 t0 t1 r
		shift 3
		[ "$pid" = "$BKPID" ] && port=$BKP || port=$RBP
		s0=$(cpu_ticks "$pid") t0=$(date +%s.%N)
		if [ "$gen" = firehose ]; then
			r=$(taskset -c "$gen_cpus" "$FH" -addr $HOST:"$port" -key "hits$n" -r "$n" "$@" | cut -d' ' -f1)
		else
			r=$(GEN_CPUS=${srv_cpu:+1} rps "$port" "$@" -r "$n" BF.EXISTS "hits$n" __rand_int__)
		fi
		s1=$(cpu_ticks "$pid") t1=$(date +%s.%N)
		awk -v r="$r" -v s="$((s1 - s0))" -v hz="$(getconf CLK_TCK)" -v t0="$t0" -v t1="$t1" \
			'BEGIN { printf "%s %.0f\n", r, 100 * s / hz / (t1 - t0) }'
	}
	lookup_case() { # NAME ITEMS TARGET GENERATOR ARGS...
		local name=$1 n=$2 target=$3 gen=$4 a b ca cb bks=() rbs=() bkc=() rbc=()
		shift 4
		[ "$PIN" = 1 ] && name="$name, pinned"
		name="$name, $gen"
		for _ in $(seq 1 "$ALTS"); do
			read -r a ca < <(gen_rate "$BKPID" "$gen" "$n" "$@")
			read -r b cb < <(gen_rate "$RBPID" "$gen" "$n" "$@")
			bks+=("$a") rbs+=("$b")
			bkc+=("$(awk -v r="$a" -v c="$ca" 'BEGIN { if (c > 0) printf "%.0f\n", r * 100 / c }')")
			rbc+=("$(awk -v r="$b" -v c="$cb" 'BEGIN { if (c > 0) printf "%.0f\n", r * 100 / c }')")
			echo "  $name: bloomkit $a (server at ${ca}% of a core), RedisBloom $b (${cb}%) requests/s"
		done
		a=$(median "${bks[@]}") b=$(median "${rbs[@]}")
		row "$name (requests/s)" "$a" "$b" "$(ratio "$a" "$b")" "≥ $target×" "$(verdict "$a >= $target * $b")"
		a=$(median "${bkc[@]}") b=$(median "${rbc[@]}")
		row "per second of server CPU: $name (requests)" "$a" "$b" "$(ratio "$a" "$b")" "(figure)" "—"
	}
	# LOOKUP_GENS: the load generators of the pipelined rows: redis-benchmark
	# (parses every reply: on a 2-core VM it takes its core at 0.7-0.8 M
	# requests/s and is then the limit for both servers) and firehose
	# (bench/firehose: prepared pipelines, an epoll loop, no parsing beyond
	# counting the :0 and :1).
	for gen in ${LOOKUP_GENS:-redis-benchmark firehose}; do
		lookup_case "BF.EXISTS hits -c 50 -P 16, $SMALL items" "$SMALL" 1.0 "$gen" -c 50 -P 16 -n "$N_P16"
		lookup_case "BF.EXISTS hits -c 50 -P 16, $BIG items" "$BIG" 1.5 "$gen" -c 50 -P 16 -n "$N_P16"
	done
	lookup_case "BF.EXISTS hits -c 1, $SMALL items" "$SMALL" 0.95 redis-benchmark -c 1 -n "$N_C1"
	stop "$BKPID"
	stop "$RBPID"
fi

# ---------------------------------------------------------------- madd
if has_case madd; then
	echo "## madd: BF.MADD 1,000 items a call, -c $MADD_C -P $MADD_P, about $MADD_ITEMS items into a reserved $MADD_CAP NONSCALING filter"
	rm -rf "$W/madd"
	mkdir -p "$W/madd/bk"
	bk_start "$W/madd/bk" $BKP
	rb_start "$W/madd/rb" $RBP
	ARGS=$(madd_args 1000)
	# redis-benchmark sends whole pipelines: the calls, a multiple of MADD_C × MADD_P.
	calls=$(( (MADD_ITEMS / 1000 + MADD_C * MADD_P - 1) / (MADD_C * MADD_P) * MADD_C * MADD_P ))
	MADD_ITEMS=$((calls * 1000))
	# madd_one PORT PID: one alternation on one server: prints "items/s bytes/item checkpoints filter_bytes".
	madd_one() {
		local port=$1 pid=$2 w0 w1 c0 c1 r size
		redis-cli -p "$port" DEL madd >/dev/null
		redis-cli -p "$port" BF.RESERVE madd 0.01 "$MADD_CAP" NONSCALING >/dev/null
		sleep "$SETTLE" # the reservation's own writes are not the adds'
		[ "$port" = $RBP ] && rb_settle "$port"
		w0=$(io_written "$pid") c0=$(info_num "$port" "$BK_CHECKPOINT_INFO")
		# shellcheck disable=SC2086
		r=$(rps "$port" -c "$MADD_C" -P "$MADD_P" -n "$calls" -r 2000000000 BF.MADD madd $ARGS)
		sleep "$SETTLE"
		[ "$port" = $RBP ] && rb_settle "$port"
		w1=$(io_written "$pid") c1=$(info_num "$port" "$BK_CHECKPOINT_INFO")
		size=$(redis-cli -p "$port" BF.INFO madd SIZE | tail -1)
		awk -v r="$r" -v w="$((w1 - w0))" -v n="$MADD_ITEMS" -v c0="$c0" -v c1="$c1" -v s="$size" \
			'BEGIN { printf "%.0f %.1f %s %s\n", r * 1000, w / n, (c0 == "" ? "n/a" : c1 - c0), s }'
	}
	bks=() rbs=() bkb=() rbb=() ckpts=() size=0
	for _ in $(seq 1 "$ALTS"); do
		read -r a ab ck size < <(madd_one $BKP "$BKPID")
		read -r b bb _ _ < <(madd_one $RBP "$RBPID")
		bks+=("$a") rbs+=("$b") bkb+=("$ab") rbb+=("$bb") ckpts+=("$ck")
		echo "  bloomkit $a items/s, $ab bytes written/item, checkpoints $ck (filter $size bytes, BF.CARD $(redis-cli -p $BKP BF.CARD madd)); RedisBloom $b items/s, $bb bytes written/item (BF.CARD $(redis-cli -p $RBP BF.CARD madd))"
	done
	a=$(median "${bks[@]}") b=$(median "${rbs[@]}")
	row "BF.MADD into reserved $MADD_CAP NONSCALING (items/s)" "$a" "$b" "$(ratio "$a" "$b")" "≥ 1.0×" "$(verdict "$a >= $b")"
	ab=$(median "${bkb[@]}") bb=$(median "${rbb[@]}") ck=$(median "${ckpts[@]}")
	[ "$ck" = n/a ] && ckn=0 || ckn=$ck
	limit=$(awk -v c="$ckn" -v s="$size" -v n="$MADD_ITEMS" 'BEGIN { printf "%.1f", 64 + 2 * s * c / n }')
	row "disk bytes written per added item (checkpoints: $ck)" "$ab" "$bb" "$(ratio "$bb" "$ab")" "≤ 64 + 2×filter×checkpoints/items = $limit" "$(verdict "$ab <= $limit")"
	stop "$BKPID"
	stop "$RBPID"
fi

# ---------------------------------------------------------------- restart
if has_case restart; then
	echo "## restart: a $RESTART_CAP-capacity filter and $RESTART_ITEMS adds through the server, kill -$BK_STOP_SIGNAL, restart"
	FA="$W/firstanswer"
	(cd "$HERE/firstanswer" && go build -o "$FA" .)
	ARGS=$(madd_args 1000)
	calls=$(( (RESTART_ITEMS / 1000 + 15) / 16 * 16 )) # whole pipelines of 16
	RESTART_ITEMS=$((calls * 1000))
	if [ ! -d "$W/restart/bk.pristine" ]; then
		rm -rf "$W/restart/bk"
		mkdir -p "$W/restart/bk"
		BK_EXTRA="$BK_EXTRA $BK_NOCHECKPOINT" bk_start "$W/restart/bk" $BKP
		redis-cli -p $BKP BF.RESERVE big 0.01 "$RESTART_CAP" NONSCALING >/dev/null
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		redis-benchmark -p $BKP -c 1 -P 16 -n "$calls" -r 2000000000 -q BF.MADD big $ARGS >/dev/null
		redis-cli -p $BKP BF.ADD big restart-probe-last >/dev/null
		echo "  bloomkit: $RESTART_ITEMS adds written in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s; BF.CARD $(redis-cli -p $BKP BF.CARD big)"
		sleep "$SETTLE"
		stop "$BKPID" "$BK_STOP_SIGNAL"
		mv "$W/restart/bk" "$W/restart/bk.pristine"
	fi
	ls -l "$W/restart/bk.pristine" | sed 's/^/  /'
	LOG="$W/restart/bk.pristine/big.bloom.log"
	digests=""
	if [ -f "$LOG" ]; then
		digests=$("$FA" -count-log "$LOG" | sed -E 's/^digests=([0-9]+).*/\1/')
		echo "  the log holds $digests digests ($(stat -c %s "$LOG") bytes)"
	else
		echo "  no big.bloom.log: this server writes no digest log (before the WAL); the restart opens the file only"
	fi
	bk_restart() { # one timed restart of a fresh copy: prints "seconds replay_info"
		rm -rf "$W/restart/bk.run"
		cp -a --reflink=auto "$W/restart/bk.pristine" "$W/restart/bk.run"
		local out pid rep
		# shellcheck disable=SC2086
		out=$("$FA" -addr $HOST:$BKP -key big -item restart-probe-last -stderr "$W/bloomkit.log" -- \
			"$BK" serve -dir "$W/restart/bk.run" -addr $HOST:$BKP $BK_FLAGS $BK_EXTRA)
		pid=$(echo "$out" | sed -E 's/.*pid=([0-9]+).*/\1/')
		rep=$(info_seconds $BKP "$BK_REPLAY_INFO")
		kill "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
		echo "$(echo "$out" | sed -E 's/first_answer_s=([0-9.]+).*/\1/') ${rep:-n/a}"
	}
	if [ "$RESTART_RB" = 1 ] && [ ! -d "$W/restart/rb.pristine" ]; then
		rm -rf "$W/restart/rb"
		rb_start "$W/restart/rb" $RBP
		redis-cli -p $RBP BF.RESERVE big 0.01 "$RESTART_CAP" NONSCALING >/dev/null
		# shellcheck disable=SC2086
		redis-benchmark -p $RBP -c 1 -P 16 -n "$calls" -r 2000000000 -q BF.MADD big $ARGS >/dev/null
		redis-cli -p $RBP BF.ADD big restart-probe-last >/dev/null
		echo "  RedisBloom: BF.CARD $(redis-cli -p $RBP BF.CARD big)"
		sleep "$SETTLE"
		rb_settle $RBP
		stop "$RBPID" KILL
		mv "$W/restart/rb" "$W/restart/rb.pristine"
		du -sh "$W/restart/rb.pristine" | sed 's/^/  RedisBloom AOF: /'
	fi
	rb_restart() {
		rm -rf "$W/restart/rb.run"
		cp -a --reflink=auto "$W/restart/rb.pristine" "$W/restart/rb.run"
		local out pid
		# shellcheck disable=SC2086
		out=$("$FA" -addr $HOST:$RBP -key big -item restart-probe-last -- redis-server --port $RBP --bind $HOST \
			--dir "$W/restart/rb.run" --save '' $RB_FLAGS --loadmodule "$SO" --daemonize no --logfile "$W/redis.log")
		pid=$(echo "$out" | sed -E 's/.*pid=([0-9]+).*/\1/')
		kill "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
		echo "$out" | sed -E 's/first_answer_s=([0-9.]+).*/\1/'
	}
	bks=() rbs=() reps=()
	for _ in $(seq 1 "$ALTS"); do
		read -r a rep < <(bk_restart)
		b="—"
		[ "$RESTART_RB" = 1 ] && { b=$(rb_restart); rbs+=("$b"); }
		bks+=("$a") reps+=("$rep")
		echo "  bloomkit first answer after ${a} s (INFO replay: $rep); RedisBloom after $b s"
	done
	a=$(median "${bks[@]}")
	b="—"
	[ "$RESTART_RB" = 1 ] && b=$(median "${rbs[@]}")
	d=${digests:-0}
	limit=$(awk -v d="$d" 'BEGIN { printf "%.3f", 0.1 + d / 20e6 }')
	row "restart to first answer (s), $d digests in the log" "$a" "$b" "$(ratio "$b" "$a")" "≤ 0.1 + digests/20M = $limit s" "$(verdict "$a <= $limit")"
	rep=$(median "${reps[@]}")
	if [ -n "$digests" ]; then
		# The replay rate from INFO's replay time when the server gives it (BK_REPLAY_INFO,
		# read by info_seconds), else digests / time to first answer (a lower bound).
		rate=$(awk -v d="$d" -v r="$rep" -v a="$a" 'BEGIN { if (r == "n/a" || r <= 0) printf "%.0f", d / a; else printf "%.0f", d / r }')
		[ "$rep" = n/a ] && how="digests / first answer (lower bound)" || how="digests / INFO replay time"
		row "replay rate (digests/s, $how)" "$rate" "—" "—" "≥ 20000000" "$(verdict "$rate >= 20e6")"
	else
		row "replay rate (digests/s)" "no log" "—" "—" "≥ 20000000" "FAIL"
	fi
	rm -rf "$W/restart/bk.run" "$W/restart/rb.run"
fi

# ---------------------------------------------------------------- scaling
if has_case scaling && [ "$(nproc)" -lt 2 ]; then
	echo "## scaling: skipped, it needs 2 CPUs"
elif has_case scaling; then
	NCPU=$(nproc)
	SCALE_ONE=${SCALE_ONE:-0}               # the server's CPU when pinned to one
	SCALE_ALL=${SCALE_ALL:-0-$((NCPU - 1))} # the server's CPUs for "every core"
	GEN_ONE=${GEN_ONE:-1}                   # the generator's CPUs while the server has one
	GEN_ALL=${GEN_ALL:-$SCALE_ALL}          # the generator's CPUs while the server has SCALE_ALL
	echo "## scaling: BF.EXISTS -c 50 -P 16 on the $SMALL-item filter (generator ${SCALE_GEN:-firehose}); server on CPU $SCALE_ONE (generator on CPUs $GEN_ONE) against the server on CPUs $SCALE_ALL (generator on CPUs $GEN_ALL$([ "$GEN_ALL" = "$SCALE_ALL" ] && echo ', sharing them'))"
	mkdir -p "$W/scaling/bk"
	f="$W/scaling/bk/hits$SMALL.bloom"
	[ -f "$f" ] || items12 "$SMALL" | "$BK" build -variant partitioned -n "$SMALL" -p 0.01 -o "$f" >/dev/null 2>&1
	if [ ! -d "$W/scaling/rb" ]; then
		rb_start "$W/scaling/rb" $RBP
		redis-cli -p $RBP BF.RESERVE "hits$SMALL" 0.01 "$SMALL" NONSCALING >/dev/null
		fill_rb $RBP "hits$SMALL" "$SMALL"
		stop "$RBPID"
	fi
	# The generator: firehose (bench/firehose: prepared pipelines, a few
	# system calls each, so it leaves the server most of the machine) or,
	# with SCALE_GEN=redis-benchmark, redis-benchmark (a whole core at
	# 0.5-0.7 M requests/s: it is then the limit).
	SCALE_GEN=${SCALE_GEN:-firehose}
	FH="$W/firehose"
	[ "$SCALE_GEN" = firehose ] && (cd "$HERE/firehose" && go build -o "$FH" .)
	gen_run() { # PORT CPUS: requests/s
		if [ "$SCALE_GEN" = firehose ]; then
			taskset -c "$2" "$FH" -addr $HOST:"$1" -key "hits$SMALL" -r "$SMALL" -c 50 -P 16 -n "$N_P16" | cut -d' ' -f1
		else
			taskset -c "$2" redis-benchmark -h $HOST -p "$1" --csv -c 50 -P 16 -n "$N_P16" \
				-r "$SMALL" BF.EXISTS "hits$SMALL" __rand_int__ 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"'
		fi
	}
	# scale_one SERVER SERVER_CPUS GENERATOR_CPUS: "requests/s server_cpu% generator_cpu%"
	# (CPU % of one core: user+system time over the run's wall time).
	scale_one() {
		local pid port s0 s1 t0 t1 r gen tf hz
		if [ "$1" = bk ]; then bk_start "$W/scaling/bk" $BKP "$2"; pid=$BKPID port=$BKP; else rb_start "$W/scaling/rb" $RBP "$2"; pid=$RBPID port=$RBP; fi
		hz=$(getconf CLK_TCK)
		tf=$(mktemp)
		s0=$(cpu_ticks "$pid") t0=$(date +%s.%N)
		r=$( { TIMEFORMAT=%P; time gen_run "$port" "$3"; } 2>"$tf")
		s1=$(cpu_ticks "$pid") t1=$(date +%s.%N)
		gen=$(tr -d ' \n' <"$tf")
		rm -f "$tf"
		stop "$pid"
		awk -v r="$r" -v s="$((s1 - s0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v g="$gen" \
			'BEGIN { printf "%s %.0f %.0f\n", r, 100 * s / hz / (t1 - t0), g }'
	}
	for srv in bk rb; do
		one=() both=()
		for _ in $(seq 1 "$ALTS"); do
			read -r r1 c1 g1 < <(scale_one $srv "$SCALE_ONE" "$GEN_ONE")
			read -r r2 c2 g2 < <(scale_one $srv "$SCALE_ALL" "$GEN_ALL")
			one+=("$r1") both+=("$r2")
			echo "  $srv: server on CPU $SCALE_ONE: $r1 requests/s (server ${c1}% of a core, generator ${g1}% on CPUs $GEN_ONE); on CPUs $SCALE_ALL: $r2 requests/s (server ${c2}%, generator ${g2}% on CPUs $GEN_ALL)"
		done
		eval "${srv}_one=$(median "${one[@]}") ${srv}_both=$(median "${both[@]}")"
	done
	a=$(ratio "$bk_both" "$bk_one") b=$(ratio "$rb_both" "$rb_one")
	row "scaling: requests/s on CPUs $SCALE_ALL / on CPU $SCALE_ONE ($bk_both / $bk_one; RedisBloom $rb_both / $rb_one)" "$a" "$b" "—" "bloomkit ≥ 1.7" "$(verdict "$a >= 1.7")"
fi

print_table
echo "# ratio: how many times bloomkit is better (its rate over RedisBloom's; RedisBloom's time or bytes over bloomkit's); targets are bloomkit's"

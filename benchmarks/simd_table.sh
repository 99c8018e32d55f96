#!/usr/bin/env bash
# simd_table.sh prints the table of docs/partitioned.md's "Built with
# GOEXPERIMENT=simd" section (issue 35): the split-block layout
# (partitioned.WithSplitBlock) one key at a time in the default build and
# in a build with GOEXPERIMENT=simd, and in batches (ContainsMany,
# Builder.AddMany, AddMany) in the default build, against a C++ reference
# one key at a time, 16-byte keys, p = 1%.
#
# The reference is Boost.Bloom's fast_multiblock32<8> (cref/boost_split.cc)
# when BOOST_BLOOM_INC names a directory with its headers (see that file),
# else our own inlined AVX2 C++ of the same layout (cref/split.cc).
#
# Every run is under `chrt -f 50` (SCHED_FIFO: the other jobs wait while it
# runs), pinned to one core (taskset -c $CPU), Go with GOMAXPROCS=1 and
# -test.cpu 1; the reference, the default build and the simd build run in
# turns, ROUNDS times per size, and the table gives the medians of the
# rounds (ns per key; each run's figure is itself the median of its 300
# turns of 4096 keys). Run as root (chrt) from the repository's root or
# from benchmarks/:
#
#   BOOST_BLOOM_INC=/path/to/boost-bloom/include ROUNDS=5 benchmarks/simd_table.sh
#
# Variables: ROUNDS (3), SIZES ("1e6 1e7"), CPU (1), BENCHTIME (300x),
# OUT (a temporary directory: the raw outputs are kept there).
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-"1e6 1e7"}
CPU=${CPU:-1}
BENCHTIME=${BENCHTIME:-300x}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

go test -c -o "$OUT/bench-default.test" .
GOEXPERIMENT=simd go test -c -o "$OUT/bench-simd.test" .
if [ -n "${BOOST_BLOOM_INC:-}" ]; then
	REF="Boost.Bloom fast_multiblock32<8>"
	g++ -O3 -march=native -std=c++17 -I"$BOOST_BLOOM_INC" -o "$OUT/cref" cref/boost_split.cc
else
	REF="cref/split.cc (our layout, inlined AVX2 C++; BOOST_BLOOM_INC unset)"
	g++ -O3 -march=native -o "$OUT/cref" cref/split.cc
fi

fifo() { chrt -f 50 taskset -c "$CPU" env GOMAXPROCS=1 "$@"; }

duel() { # build n ops
	fifo "$OUT/bench-$1.test" -test.run '^$' -test.bench '^BenchmarkDuel$' -test.benchtime "$BENCHTIME" \
		-test.count 1 -test.cpu 1 -duel partitioned-split,partitioned-split-builder \
		-duel-ops "$3" -sizes "$2" -keys 16B -p 0.01
}

# val FILE OP UNIT: the figure before UNIT on the line of op=OP.
val() { awk -v op="op=$2" -v unit="$3" 'index($1, op"") && $1 ~ op"$" {for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' "$1"; }

n_of() { awk -v s="$1" 'BEGIN{split(s, a, "e"); printf "%d", a[1] * 10 ^ a[2]}'; }

median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }

echo "# $(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/') rounds=$ROUNDS cpu=$CPU benchtime=$BENCHTIME out=$OUT"
echo "# reference: $REF"
for size in $SIZES; do
	n=$(n_of "$size")
	for r in $(seq "$ROUNDS"); do
		echo "# n=$size round $r $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >&2
		if [ -n "${BOOST_BLOOM_INC:-}" ]; then
			fifo "$OUT/cref" "$n" 0.01 >"$OUT/ref-$size-$r.txt"
		else
			fifo "$OUT/cref" "$n" >"$OUT/ref-$size-$r.txt"
		fi
		duel default "$size" hit,miss,add,batch-hit,batch-miss,batch-add >"$OUT/default-$size-$r.txt"
		duel simd "$size" hit,miss,add,batch-hit,batch-miss,batch-add >"$OUT/simd-$size-$r.txt"
	done
done

ref() { # FILE what: hit, miss or add
	if [ -n "${BOOST_BLOOM_INC:-}" ]; then
		awk -v w="$2" '{for (i = 1; i < NF; i++) if ($i == (w == "add" ? "insert" : w)) print $(i+1)}' "$1"
	else
		awk -v w="$2" '/add/ && w == "add" {print $3} /avx2/ && w != "add" {for (i = 1; i < NF; i++) if ($i == "avx2") print (w == "hit" ? $(i+2) : $(i+4))}' "$1"
	fi
}

col() { # size kind op unit (kind: ref, default, simd)
	for r in $(seq "$ROUNDS"); do
		if [ "$2" = ref ]; then ref "$OUT/ref-$1-$r.txt" "$3"; else val "$OUT/$2-$1-$r.txt" "$3" "$4"; fi
	done | median
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b}'; }

S=partitioned-split-ns/key
B=partitioned-split-builder-ns/key
echo
echo "| n | what | reference | default build | GOEXPERIMENT=simd | default / ref | simd / ref |"
echo "|---|---|--:|--:|--:|--:|--:|"
for size in $SIZES; do
	for w in hit miss; do
		rf=$(col "$size" ref "$w") d=$(col "$size" default "$w" $S) s=$(col "$size" simd "$w" $S)
		echo "| $size | \`Contains\` $w | $rf | $d | $s | $(ratio "$d" "$rf") | $(ratio "$s" "$rf") |"
	done
	rf=$(col "$size" ref add)
	d=$(col "$size" default add $B) s=$(col "$size" simd add $B)
	echo "| $size | \`Builder.Add\` | $rf | $d | $s | $(ratio "$d" "$rf") | $(ratio "$s" "$rf") |"
	d=$(col "$size" default add $S) s=$(col "$size" simd add $S)
	echo "| $size | \`Add\` (atomic) | $rf | $d | $s | $(ratio "$d" "$rf") | $(ratio "$s" "$rf") |"
	for w in hit miss; do
		rf=$(col "$size" ref "$w") d=$(col "$size" default "batch-$w" $S) s=$(col "$size" simd "batch-$w" $S)
		echo "| $size | \`ContainsMany\` $w, per key | $rf | $d | $s | $(ratio "$d" "$rf") | $(ratio "$s" "$rf") |"
	done
	rf=$(col "$size" ref add)
	d=$(col "$size" default batch-add $B) s=$(col "$size" simd batch-add $B)
	echo "| $size | \`Builder.AddMany\`, per key | $rf | $d | $s | $(ratio "$d" "$rf") | $(ratio "$s" "$rf") |"
	d=$(col "$size" default batch-add $S) s=$(col "$size" simd batch-add $S)
	echo "| $size | \`AddMany\`, per key | $rf | $d | $s | $(ratio "$d" "$rf") | $(ratio "$s" "$rf") |"
done

#!/usr/bin/env bash
# redis-benchmark in one run, server and load generator on the same machine: a bare redis-server's
# PING_MBULK, RedisBloom's BF.EXISTS and bloomkit serve's BF.EXISTS on a filter of the keys 1..1e6
# at p = 0.01 (bloomkit: a partitioned file; RedisBloom: BF.RESERVE NONSCALING filled by BF.MADD).
#
# Usage: redis-benchmark.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]   (docs/serve.md, "Figures")
set -euo pipefail
BK=${1:?usage: redis-benchmark.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]}
SO=${2:?usage: redis-benchmark.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]}
W=${3:-$(mktemp -d)}
N=${N:-1000000}; N1=${N1:-200000}; P=${PORT:-17100}
mkdir -p "$W/dir"
[ -f "$W/dir/small.bloom" ] || seq 1 1000000 | "$BK" build -variant partitioned -n 1e6 -p 0.01 -o "$W/dir/small.bloom"
redis-server --port $P --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --logfile "$W/r1.log"
redis-server --port $((P+1)) --bind 127.0.0.1 --save '' --appendonly no --loadmodule "$SO" --daemonize yes --logfile "$W/r2.log"
"$BK" serve -dir "$W/dir" -addr 127.0.0.1:$((P+2)) 2>"$W/bk.log" & BKPID=$!
trap 'kill $BKPID; redis-cli -p $P shutdown nosave; redis-cli -p $((P+1)) shutdown nosave' EXIT
sleep 1
redis-cli -p $((P+1)) BF.RESERVE small 0.01 1000000 NONSCALING >/dev/null
seq 1 1000000 | xargs -n 1000 redis-cli -p $((P+1)) BF.MADD small >/dev/null
one() { redis-benchmark -p "$1" "${@:2}" | tr '\r' '\n' | grep -v -e '^$' -e WARNING | tail -1; }
for opts in "-c 50 -P 16 -n $N" "-c 1 -n $N1"; do
	for round in 1 2; do
		echo "== $opts (round $round)"
		one $P $opts -q -t ping_mbulk
		one $((P+1)) $opts -q -r 2000000 BF.EXISTS small __rand_int__ | sed 's/^/RedisBloom /'
		one $((P+2)) $opts -q -r 2000000 BF.EXISTS small __rand_int__ | sed 's/^/bloomkit   /'
	done
done

#!/usr/bin/env bash
# Restart to first answer with a 1 GB filter: bloomkit serve over a 1 GB partitioned file, and
# redis-server + RedisBloom loading an RDB that holds a 1 GB filter (BF.RESERVE 0.01 860000000
# NONSCALING), both timed from the start of the process to the first BF.EXISTS answer, polling with
# redis-cli every 5 ms; then the resident memory of each.
#
# Usage: restart.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]   (docs/serve.md, "Figures")
set -euo pipefail
BK=${1:?usage: restart.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]}
SO=${2:?usage: restart.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]}
W=${3:-$(mktemp -d)}
mkdir -p "$W/dir" "$W/rdb"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
if [ ! -f "$W/dir/big.bloom" ]; then
	seq 1 100000000 | "$BK" build -variant partitioned -n 8.6e8 -p 0.01 -o "$W/dir/big.bloom"
fi
t0=$(date +%s%N)
"$BK" serve -dir "$W/dir" -addr 127.0.0.1:17104 2>/dev/null & P=$!
until [ "$(redis-cli -p 17104 BF.EXISTS big 1 2>/dev/null)" = "1" ]; do sleep 0.005; done
echo "bloomkit serve: $(ms $t0) ms to the first answer; $(grep -E 'RssAnon|RssFile' /proc/$P/status | tr -s ' \t\n' ' ')"
kill $P; wait $P || true

rstart() { redis-server --port 17103 --bind 127.0.0.1 --dir "$W/rdb" --dbfilename big.rdb --appendonly no \
	--loadmodule "$SO" --daemonize yes --pidfile "$W/rdb/r.pid" --logfile "$W/rdb/r.log"; }
if [ ! -f "$W/rdb/big.rdb" ]; then
	rstart; sleep 0.5
	redis-cli -p 17103 BF.RESERVE big 0.01 860000000 NONSCALING >/dev/null
	redis-cli -p 17103 BF.ADD big 1 >/dev/null
	redis-cli -p 17103 SAVE >/dev/null
	redis-cli -p 17103 SHUTDOWN NOSAVE || true
	while [ -f "$W/rdb/r.pid" ]; do sleep 0.1; done
fi
t0=$(date +%s%N)
rstart
until [ "$(redis-cli -p 17103 BF.EXISTS big 1 2>/dev/null)" = "1" ]; do sleep 0.005; done
echo "redis-server + RedisBloom: $(ms $t0) ms to the first answer (RDB $(stat -c %s "$W/rdb/big.rdb") bytes); $(redis-cli -p 17103 INFO memory | grep -E '^used_memory_rss_human' | tr -d '\r')"
redis-cli -p 17103 SHUTDOWN NOSAVE || true

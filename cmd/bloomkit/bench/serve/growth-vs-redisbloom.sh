#!/usr/bin/env bash
# Growth: N (1e7) distinct items BF.MADDed, 1,000 a call, into a
# key nobody reserved, on bloomkit serve and on redis-server + RedisBloom in
# one run (the go-redis program ./growth, same items on both), then the
# targets' table: bits per item (the larger of BF.INFO Size and the key's
# files in DIR, the log excluded and reported), false-positive rate on
# never-added items, false negatives on sampled added items, at each doubling
# from 100 and one item after it, and BF.MEXISTS of never-added items in
# items/s against RedisBloom's.
#
# Usage: growth-vs-redisbloom.sh BLOOMKIT REDISBLOOM_SO [WORKDIR]
#   QUICK=1   N=1e5, smaller samples, 1 s of BF.MEXISTS (a smoke run: seconds)
# Sizes and flags are variables below and in lib.sh (BK_FLAGS, BK_EXTRA, RB_FLAGS).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
script_args growth-vs-redisbloom "$@"

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	: "${N:=100000}" "${FP_POINTS:=10000}" "${FP_FINAL:=100000}" "${FN_SAMPLE:=2000}" "${FN_FINAL:=10000}" "${MEXISTS_SECONDS:=1}"
fi
N=${N:-10000000}                   # distinct items added
FP_POINTS=${FP_POINTS:-100000}     # never-added items checked at each intermediate point
FP_FINAL=${FP_FINAL:-1000000}      # never-added items checked at the end
FN_SAMPLE=${FN_SAMPLE:-10000}      # added items checked at each point
FN_FINAL=${FN_FINAL:-100000}       # added items checked at the end
CONNS=${CONNS:-8}                  # BF.MEXISTS connections
PIPELINE=${PIPELINE:-16}           # BF.MEXISTS calls in flight per connection
MEXISTS_BATCH=${MEXISTS_BATCH:-1000} # items per BF.MEXISTS
MEXISTS_SECONDS=${MEXISTS_SECONDS:-10}
TARGET_RATE=${TARGET_RATE:-0.01}   # the servers' default error rate (bloomkit: -default-error-rate)
KEY=${KEY:-grown}
for v in N FP_POINTS FP_FINAL FN_SAMPLE FN_FINAL; do printf -v "$v" %s "$(num "${!v}")"; done
BKP=$PORT RBP=$((PORT + 1))
trap cleanup_servers EXIT

echo "# issue 33: $N items into a never-reserved key, bloomkit serve and RedisBloom$([ "$QUICK" = 1 ] && echo ' (QUICK: smoke sizes, not results)')"
machine_header
G="$W/growth"
(cd "$HERE/growth" && go build -o "$G" .)
rm -rf "$W/bk" "$W/rb"
mkdir -p "$W/bk"
common=(-key "$KEY" -n "$N" -fp-points "$FP_POINTS" -fp-final "$FP_FINAL" -fn-sample "$FN_SAMPLE" -fn-final "$FN_FINAL"
	-conns "$CONNS" -pipeline "$PIPELINE" -mexists-batch "$MEXISTS_BATCH" -mexists-seconds "$MEXISTS_SECONDS" -target-rate "$TARGET_RATE")

echo "## bloomkit serve"
bk_start "$W/bk" $BKP
"$G" run -name bloomkit -addr $HOST:$BKP -dir "$W/bk" "${common[@]}" -json "$W/bloomkit.json"
ls -l "$W/bk" | sed 's/^/  /'
stop "$BKPID"

echo "## RedisBloom"
rb_start "$W/rb" $RBP
"$G" run -name RedisBloom -addr $HOST:$RBP "${common[@]}" -json "$W/redisbloom.json"
stop "$RBPID"

echo
"$G" report -bloomkit "$W/bloomkit.json" -redisbloom "$W/redisbloom.json"
echo "# bk better ×: how many times bloomkit is better (its rate over RedisBloom's; RedisBloom's bits or error rate over bloomkit's); targets are bloomkit's"

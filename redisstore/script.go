package redisstore

import "github.com/redis/go-redis/v9"

// missingPrefix starts the error the scripts return for a missing segment.
const missingPrefix = "BLOOMKIT_MISSING"

// addScript adds a group of keys that fall in one segment, and returns one
// character per key: '1' if some of its bits were unset (the key was new),
// '0' if all were set already. For each key it reads the key's 64-byte
// block and, only if some bit is new, writes back the bytes from the first
// changed one to the last (one SETRANGE); re-adding present keys writes
// nothing (no replication traffic, no dirty key). The keys are taken in
// order, so of two keys in one group sharing a block the second sees the
// first's bits. A script runs atomically, so concurrent Adds cannot lose
// each other's bits. One script call serves a whole group: Redis's
// per-script cost is paid once per segment of a batch, not per key.
//
//	KEYS[1]  the segment
//	KEYS[2]  the segment's counter (same hash tag), increased by the new keys
//	ARGV[1]  the segment's length in bytes
//	ARGV[2]  per key: the block's byte offset in the segment (4 bytes, big
//	         endian), the number of pairs (1 byte), and the pairs (byte
//	         index in the block 0..63, bits to set), ascending by index
//
// A segment that is not all there (deleted, evicted, short) is an error and
// nothing is written: writing would recreate a segment of zeros.
var addScript = redis.NewScript(`
if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then
  return redis.error_reply('` + missingPrefix + ` ' .. KEYS[1] .. ' is missing or not ' .. ARGV[1] .. ' bytes')
end
local p, byte, bor, char, sub = ARGV[2], string.byte, bit.bor, string.char, string.sub
local out, news, i, n = {}, 0, 1, #p
while i <= n do
  local a, b, c, d, np = byte(p, i, i + 4)
  local off = ((a * 256 + b) * 256 + c) * 256 + d
  i = i + 5
  local blk = redis.call('GETRANGE', KEYS[1], off, off + 63)
  local parts, k, first, prev = {}, 0, 0, 0
  for e = i, i + 2 * np - 1, 2 do
    local j, mask = byte(p, e, e + 1)
    j = j + 1
    local old = byte(blk, j)
    local new = bor(old, mask)
    if new ~= old then
      if first == 0 then
        first, prev = j, j - 1
      end
      if j > prev + 1 then
        k = k + 1
        parts[k] = sub(blk, prev + 1, j - 1)
      end
      k = k + 1
      parts[k] = char(new)
      prev = j
    end
  end
  i = i + 2 * np
  if first ~= 0 then
    redis.call('SETRANGE', KEYS[1], off + first - 1, table.concat(parts))
    news = news + 1
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
if news > 0 then
  redis.call('INCRBY', KEYS[2], news)
end
return table.concat(out)
`)

// createHeaderScript writes a header if there is none (returns 1) and
// otherwise leaves the existing one alone (returns 0).
//
//	KEYS[1]  the header
//	ARGV     field, value, field, value, ...
var createHeaderScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`)

// replaceHeaderScript writes a header over the one of generation ARGV[1]
// ("0": over no header), and returns 1; if the header is of another
// generation (or exists when none was expected) it changes nothing and
// returns 0.
//
//	KEYS[1]  the header
//	ARGV[1]  expected current generation, "0" for none
//	ARGV[2:] field, value, ...
var replaceHeaderScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'generation')
if cur == false then cur = '0' end
if cur ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
`)

package redisstore

import "github.com/redis/go-redis/v9"

// missingPrefix starts the error the scripts return for a missing segment.
const missingPrefix = "BLOOMKIT_MISSING"

// addScript sets a key's bits in its block and reports whether any was
// unset (1) or all were set already (0). It reads the block once and writes
// only the bytes that change, so re-adding a present key writes nothing (no
// replication traffic, no dirty key). Lua runs atomically, so concurrent
// Adds of keys sharing a block cannot lose each other's bits.
//
//	KEYS[1]  the segment
//	KEYS[2]  the segment's counter (same hash tag)
//	ARGV[1]  byte offset of the block in the segment
//	ARGV[2]  pairs of bytes: (byte index in the block 0..63, bits to set),
//	         one pair per byte of the block that holds some of the key's bits
//
// A block that is not all there (the segment was deleted or is short) is an
// error, not a write: writing would recreate a segment of zeros.
var addScript = redis.NewScript(`
local off = tonumber(ARGV[1])
local blk = redis.call('GETRANGE', KEYS[1], off, off + 63)
if #blk ~= 64 then
  return redis.error_reply('` + missingPrefix + ` ' .. KEYS[1] .. ' has no block at byte ' .. off)
end
local todo = ARGV[2]
local new = 0
for i = 1, #todo, 2 do
  local j = string.byte(todo, i)
  local mask = string.byte(todo, i + 1)
  local old = string.byte(blk, j + 1)
  if bit.band(old, mask) ~= mask then
    redis.call('SETRANGE', KEYS[1], off + j, string.char(bit.bor(old, mask)))
    new = 1
  end
end
if new == 1 then
  redis.call('INCR', KEYS[2])
end
return new
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

package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// evalCalls runs script once per call (keys[i], args[i]) and returns the
// commands, to be read one by one: in one pipelined round trip when there
// are several (one per node of a Cluster). Each call goes by EVALSHA first;
// calls answered NOSCRIPT, because Redis's script cache was emptied (SCRIPT
// FLUSH, a restart, a failover to a replica that never ran it), are sent
// again, by EVAL with the script's source, which cannot be answered so and
// puts the script back in the cache. So a flushed cache costs one more
// round trip, never an error, however often it is flushed; and nothing is
// loaded ahead (SCRIPT LOAD), so a client that never runs a script needs
// no permission to.
func evalCalls(ctx context.Context, c redis.UniversalClient, script *redis.Script, keys [][]string, args [][]any) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(keys))
	run := func(idx []int, eval bool) {
		send := script.EvalSha
		if eval {
			send = script.Eval
		}
		if len(idx) == 1 {
			cmds[idx[0]] = send(ctx, c, keys[idx[0]], args[idx[0]]...)
			return
		}
		pipe := c.Pipeline()
		for _, i := range idx {
			cmds[i] = send(ctx, pipe, keys[i], args[i]...)
		}
		_, _ = pipe.Exec(ctx) // errors are read per command
	}
	all := make([]int, len(keys))
	for i := range all {
		all[i] = i
	}
	run(all, false)
	var again []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		run(again, true)
	}
	return cmds
}

// missingPrefix starts the error the scripts return for a missing segment.
const missingPrefix = "BLOOMKIT_MISSING"

// Replies of opScript besides one character per key.
const (
	replyStale = "N" // a stage was added since the client read the header
	keyNew     = '1' // add: some bit was unset; contains: present
	keyOld     = '0' // add: present in some stage; contains: absent
	keyFull    = 'F' // add: not added, the unit of the newest stage is full
)

// opScript adds or looks up a group of keys that share one hash tag (a
// segment of a fixed filter, a shard of a growing one). Every key comes with
// its block in each stage; Add tests the older stages first and adds to the
// newest only if the key is in none (so a key present anywhere is not new
// and does not count toward growth), and Contains tests every stage. It
// returns one character per key (keyNew, keyOld, keyFull), or replyStale.
//
// For each key it reads the key's 64-byte block and, only if some bit is
// new, writes back the bytes from the first changed one to the last (one
// SETRANGE); re-adding present keys writes nothing (no replication traffic,
// no dirty key). Keys are taken in order, so of two keys sharing a block
// the second sees the first's bits. A script runs atomically, so concurrent
// Adds cannot lose each other's bits.
//
//	KEYS[1]  the counter of the unit in the newest stage
//	KEYS[2]  if ARGV[3] is '1': the first segment of the unit in the stage
//	         after the newest; if it exists a stage was added: replyStale
//	KEYS[..] the segments the entries name, by position from 0
//	ARGV[1]  'a' add, 'c' contains
//	ARGV[2]  stages per entry
//	ARGV[3]  '1' if KEYS[2] is the next stage's segment, '0' if none
//	ARGV[4]  share: keys past this count of the newest unit are keyFull
//	         ('0': no limit)
//	ARGV[5]  entries: per key, per stage (add: oldest first, so the
//	         newest is last; contains: any order): the segment's
//	         position (1 byte), the block's byte offset (4 bytes, big
//	         endian), the number of pairs (1 byte), and the pairs (byte
//	         index in the block 0..63, bits), ascending by index
//	ARGV[6..] each segment's length in bytes, in KEYS order
//
// A segment that is not all there (deleted, evicted, short, long) is an
// error and nothing is written: writing would recreate a segment of zeros.
var opScript = redis.NewScript(opSource)

const opSource = `
local mode, T, share, p = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4]), ARGV[5]
local first = 1
if ARGV[3] == '1' then
  first = 2
  if redis.call('EXISTS', KEYS[2]) == 1 then
    return '` + replyStale + `'
  end
end
for s = first + 1, #KEYS do
  local want = ARGV[5 + s - first]
  if redis.call('STRLEN', KEYS[s]) ~= tonumber(want) then
    return redis.error_reply('` + missingPrefix + ` ' .. KEYS[s] .. ' is missing or not ' .. want .. ' bytes')
  end
end
local count = 0
if share > 0 and mode == 'a' then
  count = tonumber(redis.call('GET', KEYS[1]) or '0')
end
local byte, bor, band, char, sub = string.byte, bit.bor, bit.band, string.char, string.sub
local out, news, i, n = {}, 0, 1, #p
while i <= n do
  local present, res = false, '0'
  for t = 1, T do
    local ki, a, b, c, d, np = byte(p, i, i + 5)
    local key, off = KEYS[first + 1 + ki], ((a * 256 + b) * 256 + c) * 256 + d
    i = i + 6
    if present then
      -- found in an older stage
    elseif t < T or mode == 'c' then
      local blk = redis.call('GETRANGE', key, off, off + 63)
      present = true
      for e = i, i + 2 * np - 1, 2 do
        local j, mask = byte(p, e, e + 1)
        if band(byte(blk, j + 1), mask) ~= mask then
          present = false
          break
        end
      end
      if mode == 'c' and present then
        res = '1'
      end
    else
      local blk = redis.call('GETRANGE', key, off, off + 63)
      local parts, k, firstj, prev = {}, 0, 0, 0
      for e = i, i + 2 * np - 1, 2 do
        local j, mask = byte(p, e, e + 1)
        j = j + 1
        local old = byte(blk, j)
        local new = bor(old, mask)
        if new ~= old then
          if firstj == 0 then
            firstj, prev = j, j - 1
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
      if firstj ~= 0 then
        if share > 0 and count + news >= share then
          res = 'F'
        else
          redis.call('SETRANGE', key, off + firstj - 1, table.concat(parts))
          news = news + 1
          res = '1'
        end
      end
    end
    i = i + 2 * np
  end
  out[#out + 1] = res
end
if news > 0 then
  redis.call('INCRBY', KEYS[1], news)
end
return table.concat(out)
`

// allocScript makes segment KEYS[1] ARGV[1] zero bytes long and returns
// its length. With ARGV[2] = 'new' it first deletes the segment and
// KEYS[2] (its counter); with 'keep' it leaves a segment that exists alone
// (a stage that another client is adding at the same time).
var allocScript = redis.NewScript(`
if ARGV[2] == 'new' then
  redis.call('DEL', KEYS[1], KEYS[2])
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SETRANGE', KEYS[1], tonumber(ARGV[1]) - 1, '\0')
end
return redis.call('STRLEN', KEYS[1])
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

// replaceHeaderScript writes a header over the one whose field ARGV[1]
// reads ARGV[2] ("" for a missing field or header), and returns 1; if the
// field holds anything else it changes nothing and returns 0. Push compares
// the generation; growth compares the checksum, so that of many clients
// adding the same stage exactly one succeeds.
//
//	KEYS[1]  the header
//	ARGV[1]  the field compared
//	ARGV[2]  its expected value
//	ARGV[3:] field, value, ...
var replaceHeaderScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == false then cur = '' end
if cur ~= ARGV[2] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1
`)

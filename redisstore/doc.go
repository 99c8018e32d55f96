// Package redisstore is a partitioned (cache-line blocked) Bloom filter
// whose bits live in Redis, so that many processes on many machines share
// one filter: service instances deduplicating against one set, several
// writers updating a filter online. It uses the partitioned package's
// geometry and hashing, so a key sets the same bits in Redis as in a
// partitioned filter file, and a file built offline can be pushed to Redis
// (Push) and pulled back (Pull) byte for byte.
//
// A filter is m bits in 512-bit blocks; a key's k bits all fall in one
// 64-byte block (partitioned.Locate), picked from its digest under the
// hashing scheme the header records (scheme 2, XXH3-64 and a mixer, for
// new filters; scheme 1, XXH3-128, for filters made before it and files
// pushed from them). So:
//
//   - Add is one round trip: a Lua script reads the key's block, sets its
//     bits, writes back only if one was unset, and reports whether the key
//     was new. Scripts run atomically, so concurrent Adds never lose bits.
//   - Contains is one round trip of plain commands, no script: GETRANGE of
//     the key's 64-byte block in each stage and STRLEN of its segment,
//     pipelined, tested here (for a growing filter, with an EXISTS that
//     tells whether a stage was added meanwhile).
//   - AddMany and ContainsMany pipeline a batch in one round trip (per
//     node of a Cluster); AddMany sends one script call per segment (per
//     shard of a growing filter) the batch touches, not one per key, and so
//     does ContainsMany on a growing filter.
//
// A filter made WithGrowth grows as RedisBloom's default filter does: when
// its newest stage is full, the next client to add a key adds a stage of
// s times the capacity (WithGrowth(s); RedisBloom's EXPANSION, 2 by
// default there) at r times the rate (WithTightening(r), default 0.85);
// exactly one of many racing clients succeeds and the others follow without
// a restart, so the compound rate stays below p however many keys come.
// Stages are sized by scalable.StageParams, as the scalable package sizes
// its own, and each
// stage's geometry is recorded in the header, so an existing filter is read
// as it was made. Its stages are cut into 16 shards whose hash tags are the
// same in every stage, so Add (test the older stages, add to the newest)
// stays one script call, and Contains (test every stage) one pipelined
// round trip.
//
// The bits are cut into segments (Redis strings, 1 MiB by default) whose
// keys carry hash tags, so a large filter spreads over a Redis Cluster's
// slots. A header (layout version, variant, hashing scheme, seed, geometry,
// segment size, generation, stages, and a checksum of all of them) is
// stored beside them and validated when a client attaches, so an edited
// header is refused; docs/redis.md specifies the layout byte by byte and
// sets RedisBloom's BF.* commands beside this package's calls.
//
// Scripts are sent by EVALSHA, and by EVAL when Redis answers NOSCRIPT (its
// script cache was flushed, or the server restarted or failed over), so a
// flushed cache costs a round trip, never an error. Nothing is loaded when
// a client attaches: a Redis user whose ACL forbids scripts (no
// +@scripting) can attach, look keys up, count and pull; adding needs
// EVAL and EVALSHA.
//
// Every call takes a context.Context. When Redis is unreachable, times
// out, or a segment is gone or of the wrong length (evicted, overwritten,
// lost in a failover), the call returns an error (ErrRedis, ErrMissing):
// never a silent "absent". Clients made by ParseURL stop at the context's
// deadline even when the server hangs.
//
// At p = 1% a filter costs 9.9 bits per key in Redis (1.2 MB per million
// keys), as partitioned does. docs/redis.md has measured throughput against
// go-zero's Redis Bloom filter.
//
// # Caveats
//
//   - Add's "new" answer is exact under concurrency (scripts serialise),
//     but a Push that replaces the filter drops Adds made to the old one
//     after the switch, as a rebuilt file replaces a live one.
//   - Segments are allocated (zeros) when the filter is created: m/8 bytes
//     of Redis memory up front, so that a later missing segment is
//     detectable. Use a maxmemory policy that does not evict them
//     (noeviction or volatile-*).
//   - A single call's latency is Redis's round trip; throughput comes from
//     batches (AddMany, ContainsMany) or many concurrent callers.
//   - Pull is not a point-in-time snapshot of a filter being written: every
//     key added before Pull starts is in the file, later ones may be. A
//     growing filter cannot be pulled (a partitioned file holds one stage).
//   - A growing filter's shard is full at capacity/16 keys, so a stage may
//     be added a little before the whole stage holds its capacity; every
//     stage is then below its rate. Past WithMaxStages or WithMaxBytes, Add
//     returns ErrLimit.
//   - Single calls cost a round trip plus Redis's work: a Lua call costs
//     Redis a few microseconds more than GETRANGE, so Add is slower than
//     Contains (docs/redis.md has the figures).
package redisstore

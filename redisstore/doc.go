// Package redisstore is a partitioned (cache-line blocked) Bloom filter
// whose bits live in Redis, so that many processes on many machines share
// one filter: service instances deduplicating against one set, several
// writers updating a filter online. It uses the partitioned package's
// geometry and hashing, so a key sets the same bits in Redis as in a
// partitioned filter file, and a file built offline can be pushed to Redis
// (Push) and pulled back (Pull) byte for byte.
//
// A filter is m bits in 512-bit blocks; a key's k bits all fall in one
// 64-byte block, picked from its XXH3-128 digest (see partitioned). So:
//
//   - Add is one round trip: a Lua script reads the key's block, sets its
//     bits, writes back only if one was unset, and reports whether the key
//     was new. Scripts run atomically, so concurrent Adds never lose bits.
//   - Contains is one round trip: GETRANGE of the 64-byte block, tested
//     here. Redis does no per-bit work.
//   - AddMany and ContainsMany pipeline a batch in one round trip (per
//     node of a Cluster); AddMany sends one script call per segment the
//     batch touches, not one per key.
//
// The bits are cut into segments (Redis strings, 1 MiB by default) whose
// keys carry hash tags, so a large filter spreads over a Redis Cluster's
// slots. A header (layout version, variant, seed, geometry, segment size,
// generation) is stored beside them and validated when a client attaches;
// docs/redis.md specifies the layout byte by byte.
//
// Every call takes a context.Context. When Redis is unreachable, times
// out, or a segment is gone (evicted, lost in a failover), the call returns
// an error (ErrRedis, ErrMissing): never a silent "absent".
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
//     key added before Pull starts is in the file, later ones may be.
package redisstore

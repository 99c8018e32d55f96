// Package cf is RedisBloom's own cuckoo filter, slot for slot: a list of
// filters (RedisBloom's CuckooFilter), the first of a power-of-two number of
// buckets and each next one Expansion times larger, of BucketSize one-byte
// fingerprints, hashed with MurmurHash64A, so that a key moved from a
// RedisBloom server by CF.SCANDUMP/CF.LOADCHUNK or DUMP/RESTORE answers
// CF.EXISTS, CF.COUNT and CF.DEL exactly as it did there, and goes back the
// same ways.
//
// It exists for moving in: its fingerprints are 8 bits (a rate of about
// 2·BucketSize/255 a filter, 1.6% with buckets of two) and its tables powers
// of two; new keys use bloomkit's native cuckoo variant.
//
// An item's hash h = 64A(item, 0) gives its fingerprint fp = h mod 255 + 1
// and its buckets h and h ^ (fp·0x5bd1e995), each taken mod the filter's
// bucket count. An insert takes a free slot of either bucket in the newest
// filter, then the older ones; else it kicks fingerprints along the chain
// of alternate buckets of the newest filter (MaxIterations swaps, the next
// slot of each bucket in turn), walking the chain back when it ends full;
// else it adds a filter (none with EXPANSION 0: ErrNoSpace). Every step is a
// function of the filter's slots, so the same inserts make the same slots
// here and in RedisBloom.
//
// # Concurrency
//
// Lookups are safe during changes without a lock: slots are read with
// atomic loads, and a lookup that overlaps a kick chain or a compaction's
// move (the moments a fingerprint is between two slots) reads again; the
// changes themselves are serialized by a mutex.
//
// # Caveats
//
// RedisBloom keeps a bucket's first slot in 32 bits (SubCF_GetIndex), so in
// a filter of more than 2^32 slots its lookups and its kicks disagree about
// where a bucket is; this package does as it does, to answer what it
// stored.
package cf

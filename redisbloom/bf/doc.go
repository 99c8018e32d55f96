// Package bf is RedisBloom's own Bloom filter, bit for bit: a chain of
// stages (RedisBloom's SBChain), each a classic Bloom filter of its own
// geometry, hashed with MurmurHash64A (or, in chains made before RedisBloom
// forced 64 bits, MurmurHash2), so that a key moved from a RedisBloom server
// by BF.SCANDUMP/BF.LOADCHUNK or DUMP/RESTORE answers every item exactly as
// it did there, and goes back the same ways.
//
// It exists for moving in, not for new filters: its stages are classic
// (a lookup of an absent key probes every stage, k cache lines each) and
// grow as RedisBloom's do (each stage Expansion times larger, its error
// halved), so a chain grown 1e5-fold costs about 42.8 bits a key against
// 13.0 for package growing. New keys use bloomkit's native variants.
//
// A key of item is hashed as RedisBloom hashes it: a = 64A(item,
// 0xc6a4a7935bd1e995), b = 64A(item, a); probe i of a stage of m bits is
// bit (a + i·b) mod m, byte bit/8, bit bit%8 of it. A stage of capacity n
// at error e has bpe = -ln e / ln² 2 bits a key, m = ⌊n·bpe⌋ rounded up to
// 64 bits, and k = ⌈ln 2 · bpe⌉ probes. An add is new when no stage holds
// the item; it goes to the newest stage, which, once it holds its capacity,
// is followed by a stage of Expansion times the capacity at half the error
// (none for a NONSCALING chain: the add is refused with ErrFull).
//
// # Concurrency
//
// Contains is safe during adds without a lock (atomic loads of the words,
// atomic ORs to set bits, the list of stages swapped whole when one is
// added); adds are serialized by a mutex of the filter.
//
// # Caveats
//
// The sizes are RedisBloom's, float rounding included, for the stages it
// made: they are read from its dump, not computed again. A stage added here
// computes its size with Go's math.Log, which may differ from the C
// library's in the last bit of a rare value; such a stage is still a valid
// RedisBloom stage, and every item added to it is present in both servers.
package bf

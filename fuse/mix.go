package fuse

// A shard turns a key's 64-bit digest d into x = mix(d + seed) with the
// shard's own seed; x gives the key's three cells and its fingerprint. mix
// is MurmurHash3's 64-bit finaliser, a bijection, so distinct digests give
// distinct x under every seed, and unmix undoes it (a shard rebuilt with
// another seed gets its digests back from the x it sorted).

const (
	mixMul1 = 0xff51afd7ed558ccd
	mixMul2 = 0xc4ceb9fe1a85ec53
)

// Multiplicative inverses of the mixer's constants mod 2^64.
var (
	mixInv1 = inverse(mixMul1)
	mixInv2 = inverse(mixMul2)
)

func mix(x uint64) uint64 { return finalise(x, mixMul1, mixMul2) }

// unmix is the inverse of mix: each x ^= x>>33 undoes itself (33 >= 32), so
// the finaliser with the inverse multipliers in reverse order undoes it.
func unmix(x uint64) uint64 { return finalise(x, mixInv2, mixInv1) }

// finalise is MurmurHash3's finaliser shape with multipliers m1 and m2.
func finalise(x, m1, m2 uint64) uint64 {
	x ^= x >> 33
	x *= m1
	x ^= x >> 33
	x *= m2
	x ^= x >> 33
	return x
}

// inverse returns the inverse of the odd a mod 2^64 by Newton's iteration
// (each step doubles the correct low bits: 3 of them to start).
func inverse(a uint64) uint64 {
	x := a
	for range 5 {
		x *= 2 - a*x
	}
	return x
}

// cells returns the three cells of x in a shard of geometry
// (segCountLen = segCount*segLen, segLen, mask = segLen-1): one in each of
// three consecutive segments, the first from the high bits of x, the other
// two moved inside their segments by low bits of x.
func cells(x, segCountLen, segLen, mask uint64) (h0, h1, h2 uint64) {
	h0 = mulhi(x, segCountLen)
	h1 = (h0 + segLen) ^ (x>>18)&mask
	h2 = (h0 + 2*segLen) ^ x&mask
	return
}

// fingerprint is the fingerprint of x, truncated to the cell width.
func fingerprint(x uint64) uint64 { return x ^ x>>32 }

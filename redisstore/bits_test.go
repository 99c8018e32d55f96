package redisstore

import (
	"math/bits"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/partitioned"
)

// The bits of a partitioned filter's payload as the tests check them,
// through partitioned's public Locate.

// addBits sets digest d's bits in words, a partitioned payload of blocks
// blocks and k probes, and reports whether one was unset.
func addBits(words []uint64, blocks uint64, d bloomkit.Digest, k uint32) bool {
	b, m := partitioned.Locate(d, blocks, k)
	isNew := false
	for w, mw := range m {
		if words[b*8+uint64(w)]&mw != mw {
			isNew = true
		}
		words[b*8+uint64(w)] |= mw
	}
	return isNew
}

// hasBits reports whether every bit of digest d is set in words.
func hasBits(words []uint64, blocks uint64, d bloomkit.Digest, k uint32) bool {
	b, m := partitioned.Locate(d, blocks, k)
	for w, mw := range m {
		if words[b*8+uint64(w)]&mw != mw {
			return false
		}
	}
	return true
}

// positions returns the positions (0..511) of the bits of m, ascending.
func positions(m partitioned.Masks) []uint64 {
	var ps []uint64
	for w, mw := range m {
		for ; mw != 0; mw &= mw - 1 {
			ps = append(ps, uint64(64*w+bits.TrailingZeros64(mw)))
		}
	}
	return ps
}

//go:build goexperiment.simd && amd64

package blocked

import (
	"sync/atomic"
	"unsafe"

	"simd/archsimd"
)

// The split-block lookup and adds written with the simd/archsimd intrinsics
// of Go's GOEXPERIMENT=simd (issue 35), for builds with the experiment on
// amd64. The compiler turns each archsimd call into its instruction in the
// caller, so these functions are inlined where they are called, and
// SplitContainsKey, SplitAddKeyPlain and Split.AddKey become one Go frame
// from the key to its bits: the hash, the block, VPBROADCASTD, VPMULLD,
// VPSRLD, VPSLLVD and VPTEST, with no call into assembly (the default
// build's splitContainsAVX2 passes its arguments and result through the
// stack). `GOEXPERIMENT=simd go build -gcflags=-m ./internal/blocked` says
// "can inline splitContainsVec", "can inline splitAddPlainVec" and "inlining
// call to splitContainsVec" in SplitContainsKey, Split.Contains,
// splitAddVec and splitTest; the disassembly of SplitContainsKey
// (`go tool objdump -s SplitContainsKey`) has no CALL on the way from the
// hash to VPTEST. They are taken where useAVX2 (chosen once at start-up);
// the bits are exactly the scalar paths' (TestSplitAVX2MatchesScalar,
// TestSplitVecAddsMatchScalar, and the golden files).

// simdBuild is true in builds with GOEXPERIMENT=simd on amd64: the adds
// take the vector forms below where useAVX2. In the other builds it is a
// false constant and the branch on it is compiled away.
const simdBuild = true

// splitSaltVec is the eight lane multipliers, lane i at index i.
var splitSaltVec = [SplitK]uint32{salt0, salt1, salt2, salt3, salt4, salt5, salt6, salt7}

// splitLanesVec returns the eight lane bits of lane key x, lane i in
// element i: 1 << (x·salt[i] mod 2^32 >> 27). Element 2j is the low half
// of word j of the block, as in the scalar masks (little-endian). Both
// shifts are per lane (VPSRLVD, VPSLLVD) by broadcast constants:
// ShiftAllRight(27) compiled to a non-VEX MOVQ of the count into an XMM
// register, the SSE/AVX transition parquet-go's split-block filter warns
// of.
func splitLanesVec(x uint32) archsimd.Uint32x8 {
	lane := archsimd.BroadcastUint32x8(x).Mul(archsimd.LoadUint32x8(&splitSaltVec)).ShiftRight(archsimd.LoadUint32x8(&splitShiftVec))
	return archsimd.LoadUint32x8(&splitOnesVec).ShiftLeft(lane)
}

// splitShiftVec and splitOnesVec are the other two constant vectors of
// splitLanesVec, loaded from memory as splitSaltVec is (a broadcast from a
// general register measured slower).
var (
	splitShiftVec = [SplitK]uint32{27, 27, 27, 27, 27, 27, 27, 27}
	splitOnesVec  = [SplitK]uint32{1, 1, 1, 1, 1, 1, 1, 1}
)

// loadSplitBlock returns the 256-bit block blk as one vector. The block's
// words may be changed by concurrent adds meanwhile: bits are only ever
// set, and each 64-bit half is read whole, so a torn read of the block
// can miss a bit being set at that moment, as the scalar path's four loads
// can.
func loadSplitBlock(blk *[SplitBlockWords]uint64) archsimd.Uint32x8 {
	return archsimd.LoadUint32x8((*[SplitK]uint32)(unsafe.Pointer(blk)))
}

// splitContainsVec is splitContains in vector instructions: VPANDN and
// VPTEST fold into one VPTEST.
func splitContainsVec(blk *[SplitBlockWords]uint64, x uint32) bool {
	return splitLanesVec(x).AndNot(loadSplitBlock(blk)).IsZero()
}

// splitAddPlainVec is splitAddPlain in vector instructions: one load, one
// OR, one store of the block, and the test of the bits that were clear.
func splitAddPlainVec(blk *[SplitBlockWords]uint64, x uint32) bool {
	m, b := splitLanesVec(x), loadSplitBlock(blk)
	b.Or(m).Store((*[SplitK]uint32)(unsafe.Pointer(blk)))
	return !m.AndNot(b).IsZero()
}

// splitAddVec is splitAdd with the lane bits from vector instructions: a
// key whose bits are all set is answered by one VPTEST and writes nothing;
// otherwise each word with a bit still clear gets an atomic OR, as in
// splitAdd.
func splitAddVec(blk *[SplitBlockWords]uint64, x uint32) bool {
	m := splitLanesVec(x)
	if m.AndNot(loadSplitBlock(blk)).IsZero() {
		return false
	}
	var ms [SplitBlockWords]uint64
	m.AsUint64x4().Store(&ms)
	for i, w := range ms {
		if w&^atomic.LoadUint64(&blk[i]) != 0 {
			atomic.OrUint64(&blk[i], w)
		}
	}
	return true
}

// useAVX512 selects the vector lookup of the 512-bit layout
// (contains512Vec), chosen once at start-up.
var useAVX512 = archsimd.X86.AVX512()

// The constant vectors of contains512Vec: the shift of probe i's 9 bits in
// the position word (9i), and the masks.
var (
	probeShiftVec = [BlockWords]uint64{0, 9, 18, 27, 36, 45, 54, 63}
	sixVec        = [BlockWords]uint64{6, 6, 6, 6, 6, 6, 6, 6}
	low6Vec       = [BlockWords]uint64{63, 63, 63, 63, 63, 63, 63, 63}
	onesVec       = [BlockWords]uint64{1, 1, 1, 1, 1, 1, 1, 1}
)

// contains512Vec reports whether the first k <= 7 probes of position word x
// (H2 >> 1) are set in the 512-bit block blk: probe i in lane i of eight
// 64-bit lanes (VPSRLVQ by 9i), its word fetched from the block by VPERMQ
// and its bit tested, all k at once.
func contains512Vec(blk *[BlockWords]uint64, x uint64, k uint32) bool {
	q := archsimd.BroadcastUint64x8(x).ShiftRight(archsimd.LoadUint64x8(&probeShiftVec))
	bit := archsimd.LoadUint64x8(&onesVec).ShiftLeft(q.And(archsimd.LoadUint64x8(&low6Vec)))
	words := archsimd.LoadUint64x8(blk).Permute(q.ShiftRight(archsimd.LoadUint64x8(&sixVec)))
	return bit.AndNot(words).NotEqual(archsimd.Uint64x8{}).ToBits()&uint8(1<<k-1) == 0
}

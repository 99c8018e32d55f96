package mmapstore

// The payload checks of the variants whose headers use fields of their own:
// window, cuckoo, and the two RedisBloom layouts (see Layout).

import (
	"math"
)

// windowLen checks a window filter's geometry and ring fields and returns
// the payload length they need: the slot table and M bytes.
func (h *Header) windowLen() (uint64, error) {
	if h.CellBits != 8 || h.BlockBits != 0 || len(h.Stages) != 0 {
		return 0, h.invalid("cell bits %d, block bits %d, %d stages; want 8, 0, 0", h.CellBits, h.BlockBits, len(h.Stages))
	}
	if err := h.checkGeom("ring", h.M, h.K, 0); err != nil {
		return 0, err
	}
	if h.M%64 != 0 || h.M > MaxCells/8 {
		return 0, h.invalid("m = %d positions, want a multiple of 64 up to %d", h.M, uint64(MaxCells/8))
	}
	if h.WindowGenerations != WindowGenerations {
		return 0, h.invalid("%d generations, want %d", h.WindowGenerations, WindowGenerations)
	}
	g := uint64(h.WindowGenerations)
	if h.WindowLength == 0 || h.WindowLength > math.MaxInt64 || h.WindowSpan != (h.WindowLength+g-2)/(g-1) {
		return 0, h.invalid("window %d, generation span %d; want a window of 1..%d and a span of ⌈window/%d⌉",
			h.WindowLength, h.WindowSpan, int64(math.MaxInt64), g-1)
	}
	if h.Capacity == 0 || (!h.WindowTimed && h.Capacity != h.WindowLength) {
		return 0, h.invalid("capacity %d for a window of %d", h.Capacity, h.WindowLength)
	}
	return WindowTableBytes + h.M, nil
}

// cuckooLen checks a cuckoo filter's shape and returns its payload
// length: M buckets of K fingerprints of CellBits bits, packed, rounded up
// to whole words.
func (h *Header) cuckooLen() (uint64, error) {
	if h.K != CuckooBucketSize || h.CellBits < CuckooMinBits || h.CellBits > CuckooMaxBits ||
		h.BlockBits != 0 || len(h.Stages) != 0 {
		return 0, h.invalid("bucket size %d, fingerprint bits %d, block bits %d, %d stages; want %d, %d..%d, 0, 0",
			h.K, h.CellBits, h.BlockBits, len(h.Stages), CuckooBucketSize, CuckooMinBits, CuckooMaxBits)
	}
	if h.M == 0 || h.M > MaxCells/(CuckooBucketSize*CuckooMaxBits) {
		return 0, h.invalid("m = %d buckets, want 1..%d", h.M, uint64(MaxCells/(CuckooBucketSize*CuckooMaxBits)))
	}
	if h.MaxKicks > CuckooMaxMaxKicks {
		return 0, h.invalid("max kicks %d, at most %d", h.MaxKicks, CuckooMaxMaxKicks)
	}
	return CellBytes(h.M*CuckooBucketSize, h.CellBits), nil
}

// redisBloomBFLen checks the fields of a redisbloom-bf file and returns the
// payload length they need.
func (h *Header) redisBloomBFLen() (uint64, error) {
	if h.CellBits != 1 || h.BlockBits != 0 || len(h.Stages) != 0 {
		return 0, h.invalid("cell bits %d, block bits %d, %d stages in the table; want 1, 0, 0", h.CellBits, h.BlockBits, len(h.Stages))
	}
	if h.K == 0 || h.K > MaxRedisBloomStages || h.M == 0 || h.M%64 != 0 || h.M > MaxCells {
		return 0, h.invalid("%d stages of %d bits", h.K, h.M)
	}
	if !(h.Growth >= 0 && h.Growth <= math.MaxUint32 && h.Growth == math.Trunc(h.Growth)) {
		return 0, h.invalid("expansion %v", h.Growth)
	}
	return RedisBloomTableBytes(20+53*uint64(h.K)) + h.M/8, nil
}

// redisBloomCFLen checks the fields of a redisbloom-cf file and returns the
// payload length they need.
func (h *Header) redisBloomCFLen() (uint64, error) {
	e := h.Growth
	if h.CellBits != 8 || h.BlockBits == 0 || h.BlockBits > 255 || len(h.Stages) != 0 ||
		h.K == 0 || h.K > 65535 || h.M == 0 || h.M&(h.M-1) != 0 || h.M >= 1<<56 ||
		!(e >= 0 && e <= 32768 && e == math.Trunc(e)) || (e != 0 && uint64(e)&(uint64(e)-1) != 0) || (e == 0 && h.K > 1) {
		return 0, h.invalid("%d filters of %d buckets of %d slots of %d bits, expansion %v", h.K, h.M, h.BlockBits, h.CellBits, e)
	}
	want := RedisBloomTableBytes(38)
	buckets := h.M
	for i := uint32(0); i < h.K; i++ {
		if i > 0 {
			if buckets > (1<<56)/uint64(e) {
				return 0, h.invalid("filter %d's buckets overflow", i)
			}
			buckets *= uint64(e)
		}
		want += (buckets*uint64(h.BlockBits) + 7) / 8 * 8
		if want > MaxCells/8 {
			return 0, h.invalid("filters exceed %d bytes", uint64(MaxCells/8))
		}
	}
	return want, nil
}

// WindowTableBytes is the size of the slot table at the start of a window
// filter's payload: one uint64 per slot (8 slots).
const WindowTableBytes = 64

// WindowGenerations is the number of generations in a window filter's
// ring: one per bit of a position's byte.
const WindowGenerations = 8

// MaxRedisBloomStages bounds the stages of a redisbloom-bf file (K).
const MaxRedisBloomStages = 1 << 20

// The limits of a cuckoo filter's header.
const (
	CuckooBucketSize  = 4     // K: fingerprints per bucket
	CuckooMinBits     = 4     // CellBits: the narrowest fingerprint
	CuckooMaxBits     = 32    // CellBits: the widest fingerprint
	CuckooMaxMaxKicks = 65535 // MaxKicks: at most (RedisBloom's MAXITERATIONS bound)
)

// RedisBloomTableBytes is the room the payload of a RedisBloom-layout file
// keeps for its SCANDUMP header chunk of n bytes: n rounded up to 64.
func RedisBloomTableBytes(n uint64) uint64 { return (n + 63) / 64 * 64 }

package mmapstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

// The file format, version 1. docs/file-format.md is the specification; this
// block mirrors it. All integers are little-endian.
//
// A file is two header slots of SlotSize bytes followed by the payload:
//
//	[0, 4096)     slot 0
//	[4096, 8192)  slot 1
//	[8192, ...)   payload: the words of the bit or counter array
//
// Both slots have the same layout. A reader takes the slot with a valid
// checksum and the highest generation; a writer always overwrites the other
// slot, so a crash while a header is written leaves the previous one intact.
const (
	Magic         = "BLOOMKIT" // bytes 0-7 of every slot
	SlotSize      = 4096
	HeaderSize    = 2 * SlotSize // bytes before the payload
	PayloadOffset = HeaderSize   // page-aligned start of the payload

	// Offsets of the fields inside a slot.
	offMagic      = 0   // [8]byte Magic
	offVersion    = 8   // uint16 format version
	offVariant    = 10  // uint16 Variant
	offScheme     = 12  // uint16 hashing scheme (hashing.Scheme: 1 or 2)
	offReserved0  = 14  // uint16, zero
	offGeneration = 16  // uint64, incremented on every header write
	offSeed       = 24  // uint64 hash seed
	offM          = 32  // uint64 cells: bits, or counters (all stages for scalable)
	offK          = 40  // uint32 probes per key (0 for scalable: see stages)
	offBlockBits  = 44  // uint32 block size in bits (0: unblocked, 512: cache line, 256: split block, partitioned only)
	offCellBits   = 48  // uint32 bits per cell (1: bit array, 4: counters)
	offFlags      = 52  // uint32 Flag bits
	offCapacity   = 56  // uint64 expected items n
	offTargetP    = 64  // float64 target false-positive rate
	offCount      = 72  // uint64 items added (Adds that reported a new key)
	offPayloadOff = 80  // uint64 payload offset; PayloadOffset in version 1
	offPayloadLen = 88  // uint64 payload length in bytes
	offPayloadSum = 96  // uint64 XXH3-64 of the payload bytes
	offStageCount = 104 // uint32 number of stages (scalable; 0 otherwise)
	offReserved1  = 108 // uint32, zero
	offGrowth     = 112 // float64 scalable: capacity ratio between stages; else 0
	offTightness  = 120 // float64 scalable: error ratio between stages; else 0
	offStages     = 128 // MaxStages stage entries of StageSize bytes
	// Growing filters have no stages; the stage table's first bytes hold:
	offInitial       = 128 // uint64 capacity the filter was made with
	offHistory       = 136 // uint64 digests of the history log the payload holds
	offHistoryOffset = 144 // uint64 byte of the history log where they end
	offHistoryID     = 152 // uint64 the id in the history log's owner field
	// Window filters have no stages; the stage table's first bytes hold:
	offWindowGenerations = 128 // uint32 generations g in the ring (8)
	offWindowTimed       = 132 // uint32 0: a window of items, 1: a window of time
	offWindowLength      = 136 // uint64 the window: w items, or T nanoseconds
	offWindowSpan        = 144 // uint64 one generation: ⌈length/(g-1)⌉ items or nanoseconds
	offWindowOrigin      = 152 // int64 Unix nanoseconds at which generation 0 began (timed)
	offWindowEpoch       = 160 // uint64 the number of the current generation
	offWindowFill        = 168 // uint64 items counted into the current generation
	// Cuckoo filters have no stages; the stage table's first bytes hold:
	offMaxKicks = 128 // uint32 buckets an insert's search for a free slot may visit
	offChecksum = SlotSize - 8

	// StageSize is the size of one stage entry: payload offset (uint64),
	// cells m (uint64), k (uint32), block bits (uint32), capacity (uint64),
	// target p (float64), count (uint64), 8 reserved bytes.
	StageSize = 56
	// MaxStages is how many stages a scalable filter file can hold.
	MaxStages = (offChecksum - offStages) / StageSize

	// MaxCells bounds m so that every size in bytes fits an int64 with room
	// to spare, on every platform.
	MaxCells = sizing.MaxCells
	// MaxK is the largest number of probes a filter may use.
	MaxK = sizing.MaxK
)

// Version is a format version. Readers refuse versions they do not know.
type Version uint16

// Format versions; a new version adds a line saying what it changed.
const (
	// Version1: two checksummed header slots, page-aligned payload, XXH3-64
	// payload checksum, stage table for scalable filters.
	Version1 Version = 1

	CurrentVersion = Version1
)

// Variant says which filter a file holds.
type Variant uint16

// Variant tags. The numbers are part of the format and never change.
const (
	Standard    Variant = 1
	Partitioned Variant = 2
	Counting    Variant = 3
	Scalable    Variant = 4
	// Fuse is a static binary fuse filter (package fuse): K = 3, CellBits 8
	// or 16 (fingerprint bits), M the fingerprints of every shard; its
	// payload is a shard table and the shards' arrays, checked by the fuse
	// package.
	Fuse Variant = 5
	// Growing is a filter that grows by rebuilding (package growing): one
	// cache-line blocked table (M bits, K, BlockBits 512, CellBits 1) for
	// Capacity keys, Growth its expansion factor, and the growing fields
	// of Header (offsets offInitial..offHistoryID) tying it to its history
	// log.
	Growing Variant = 6
	// Window is a filter of the last w items or T seconds (package
	// window): a ring of WindowGenerations generations, M positions of
	// CellBits 8 (bit j of a position's byte belongs to the generation in
	// slot j), K probes, BlockBits 0; its payload is a 64-byte table of
	// the generation each slot holds, then the M bytes; the window fields
	// of Header (offsets offWindowGenerations..offWindowFill) hold its
	// window and the state of its ring.
	Window Variant = 8
	// Cuckoo is a cuckoo filter (package cuckoo): M buckets of K = 4
	// fingerprints of CellBits (4 to 32) bits each, packed without
	// padding (bucket i at bit i*K*CellBits of the payload), and MaxKicks,
	// the search budget of an insert that has to move fingerprints.
	Cuckoo Variant = 7
	// RedisBloomBF is a Bloom chain in RedisBloom's own layout and hashing
	// (package redisbloom/bf), a key moved from RedisBloom: Scheme 3 or 4
	// (its MurmurHash), K its number of stages, M their bits together (a
	// whole number of 64-bit words each), CellBits 1, BlockBits 0, Growth
	// its expansion. The payload starts with the chain's BF.SCANDUMP header
	// chunk (RedisBloom's table of its stages, 20 + 53·K bytes) padded with
	// zeros to a multiple of 64 bytes, then each stage's bit array in
	// RedisBloom's byte order; the redisbloom/bf package checks the table.
	RedisBloomBF Variant = 9
	// RedisBloomCF is a cuckoo filter in RedisBloom's own layout and hashing
	// (package redisbloom/cf): Scheme 5, M the first filter's buckets (a
	// power of two), K the number of filters, each Growth (its expansion, a
	// power of two, or 0 with one filter) times larger than the one before,
	// BlockBits the bucket size (1 to 255), CellBits 8. The payload starts
	// with its CF.SCANDUMP header chunk (38 bytes) padded with zeros to 64,
	// then each filter's slots (a byte each, 0 free), padded with zeros to
	// a multiple of 8 bytes.
	RedisBloomCF Variant = 10
)

// String is the name the variant's package registered (RegisterVariant),
// "variant(N)" for a tag no linked package registered.
func (v Variant) String() string {
	if l, ok := layoutOf(v); ok {
		return l.name
	}
	return fmt.Sprintf("variant(%d)", uint16(v))
}

// Flag bits of the header.
const (
	// FlagChecksumCurrent says PayloadSum matches the payload. Writers clear
	// it when they open a file and set it again when they close it.
	FlagChecksumCurrent uint32 = 1 << 0
	// FlagFullRefuses says the filter refuses adds of new keys once its
	// count reaches its capacity, rather than taking them at a rising
	// rate: a server's filter reserved NONSCALING (RedisBloom's
	// "non scaling filter is full"). A file without it, as every build
	// and create makes, takes adds past its capacity (with a warning).
	// Set with MarkFullRefuses; kept by the server's checkpoints.
	FlagFullRefuses uint32 = 1 << 1

	knownFlags = FlagChecksumCurrent | FlagFullRefuses
)

// Stage is one stage of a scalable filter: a sub-filter stored at Offset
// bytes into the payload.
type Stage struct {
	Offset    uint64
	M         uint64
	K         uint32
	BlockBits uint32
	Capacity  uint64
	TargetFPR float64
	Count     uint64
}

// Header is the decoded content of a header slot.
type Header struct {
	Version Version
	Variant Variant
	// Scheme is the filter's hashing scheme (bloomkit.Scheme: 1 is seeded
	// XXH3-128, 2 is seeded XXH3-64 and a mixer), the header's u16 at
	// offset 12. Readers refuse other values with ErrScheme. Create and
	// WriteStream write a zero Scheme as 1, the scheme every writer used
	// before the field was the caller's to set.
	Scheme     hashing.Scheme
	Generation uint64
	Seed       uint64
	M          uint64
	K          uint32
	BlockBits  uint32
	CellBits   uint32
	Flags      uint32
	Capacity   uint64
	TargetFPR  float64
	Count      uint64
	PayloadLen uint64
	PayloadSum uint64
	// Scalable filters only.
	Growth     float64 // capacity ratio between stages
	Tightening float64 // error ratio between stages
	Stages     []Stage
	// Growing filters only (Growth is their expansion factor): the capacity
	// the filter was made with, and its history log (see Log): how many of
	// the log's digests the payload holds, the log offset where they end,
	// and the id the log's Owner field carries.
	InitialCapacity uint64
	History         uint64
	HistoryOffset   uint64
	HistoryID       uint64
	// Cuckoo filters only: how many buckets an insert's search for a free
	// slot may visit before the insert is refused (the filter is full).
	MaxKicks uint32
	// Window filters only: the ring's generations, whether the window is
	// of time (else of items), its length (w items or T nanoseconds), one
	// generation's span (⌈length/(generations-1)⌉ items or nanoseconds),
	// the Unix time in nanoseconds at which generation 0 began (timed
	// windows), and the ring's state as of the last header write: the
	// number of the current generation and the items counted into it.
	WindowGenerations uint32
	WindowTimed       bool
	WindowLength      uint64
	WindowSpan        uint64
	WindowOrigin      int64
	WindowEpoch       uint64
	WindowFill        uint64
}

// ChecksumCurrent reports whether PayloadSum describes the payload.
func (h *Header) ChecksumCurrent() bool { return h.Flags&FlagChecksumCurrent != 0 }

// FullRefuses reports FlagFullRefuses: adds of new keys past the capacity
// are refused.
func (h *Header) FullRefuses() bool { return h.Flags&FlagFullRefuses != 0 }

// CellBytes returns the payload bytes m cells of cellBits each occupy, rounded
// up to whole 64-bit words.
func CellBytes(m uint64, cellBits uint32) uint64 {
	return (m*uint64(cellBits) + 63) / 64 * 8
}

// encodeSlot writes h into a slot-sized buffer, checksum included.
func encodeSlot(h *Header, slot []byte) {
	clear(slot[:SlotSize])
	le := binary.LittleEndian
	copy(slot[offMagic:], Magic)
	le.PutUint16(slot[offVersion:], uint16(h.Version))
	le.PutUint16(slot[offVariant:], uint16(h.Variant))
	le.PutUint16(slot[offScheme:], uint16(h.Scheme))
	le.PutUint64(slot[offGeneration:], h.Generation)
	le.PutUint64(slot[offSeed:], h.Seed)
	le.PutUint64(slot[offM:], h.M)
	le.PutUint32(slot[offK:], h.K)
	le.PutUint32(slot[offBlockBits:], h.BlockBits)
	le.PutUint32(slot[offCellBits:], h.CellBits)
	le.PutUint32(slot[offFlags:], h.Flags)
	le.PutUint64(slot[offCapacity:], h.Capacity)
	le.PutUint64(slot[offTargetP:], math.Float64bits(h.TargetFPR))
	le.PutUint64(slot[offCount:], h.Count)
	le.PutUint64(slot[offPayloadOff:], PayloadOffset)
	le.PutUint64(slot[offPayloadLen:], h.PayloadLen)
	le.PutUint64(slot[offPayloadSum:], h.PayloadSum)
	le.PutUint32(slot[offStageCount:], uint32(len(h.Stages)))
	le.PutUint64(slot[offGrowth:], math.Float64bits(h.Growth))
	le.PutUint64(slot[offTightness:], math.Float64bits(h.Tightening))
	for i, s := range h.Stages {
		e := slot[offStages+i*StageSize:]
		le.PutUint64(e[0:], s.Offset)
		le.PutUint64(e[8:], s.M)
		le.PutUint32(e[16:], s.K)
		le.PutUint32(e[20:], s.BlockBits)
		le.PutUint64(e[24:], s.Capacity)
		le.PutUint64(e[32:], math.Float64bits(s.TargetFPR))
		le.PutUint64(e[40:], s.Count)
	}
	if l, ok := layoutOf(h.Variant); ok && l.history { // they share the stage table's bytes
		le.PutUint64(slot[offInitial:], h.InitialCapacity)
		le.PutUint64(slot[offHistory:], h.History)
		le.PutUint64(slot[offHistoryOffset:], h.HistoryOffset)
		le.PutUint64(slot[offHistoryID:], h.HistoryID)
	}
	if h.Variant == Cuckoo {
		le.PutUint32(slot[offMaxKicks:], h.MaxKicks)
	}
	if h.Variant == Window {
		le.PutUint32(slot[offWindowGenerations:], h.WindowGenerations)
		if h.WindowTimed {
			le.PutUint32(slot[offWindowTimed:], 1)
		}
		le.PutUint64(slot[offWindowLength:], h.WindowLength)
		le.PutUint64(slot[offWindowSpan:], h.WindowSpan)
		le.PutUint64(slot[offWindowOrigin:], uint64(h.WindowOrigin))
		le.PutUint64(slot[offWindowEpoch:], h.WindowEpoch)
		le.PutUint64(slot[offWindowFill:], h.WindowFill)
	}
	le.PutUint64(slot[offChecksum:], xxh3.Hash(slot[:offChecksum]))
}

// decodeSlot parses and checks one slot. It never reads outside slot.
func decodeSlot(slot []byte) (Header, error) {
	var h Header
	if len(slot) < SlotSize {
		return h, fmt.Errorf("%w: header slot is %d bytes, want %d", ErrTruncated, len(slot), SlotSize)
	}
	if string(slot[offMagic:offMagic+len(Magic)]) != Magic {
		return h, fmt.Errorf("%w: got %q", ErrBadMagic, slot[offMagic:offMagic+len(Magic)])
	}
	le := binary.LittleEndian
	h.Version = Version(le.Uint16(slot[offVersion:]))
	if h.Version != Version1 {
		return h, fmt.Errorf("%w: version %d (this build reads %d)", ErrVersion, h.Version, CurrentVersion)
	}
	if got, want := le.Uint64(slot[offChecksum:]), xxh3.Hash(slot[:offChecksum]); got != want {
		return h, fmt.Errorf("%w: stored %#016x, computed %#016x", ErrHeaderChecksum, got, want)
	}
	h.Variant = Variant(le.Uint16(slot[offVariant:]))
	h.Scheme = hashing.Scheme(le.Uint16(slot[offScheme:]))
	h.Generation = le.Uint64(slot[offGeneration:])
	h.Seed = le.Uint64(slot[offSeed:])
	h.M = le.Uint64(slot[offM:])
	h.K = le.Uint32(slot[offK:])
	h.BlockBits = le.Uint32(slot[offBlockBits:])
	h.CellBits = le.Uint32(slot[offCellBits:])
	h.Flags = le.Uint32(slot[offFlags:])
	h.Capacity = le.Uint64(slot[offCapacity:])
	h.TargetFPR = math.Float64frombits(le.Uint64(slot[offTargetP:]))
	h.Count = le.Uint64(slot[offCount:])
	payloadOff := le.Uint64(slot[offPayloadOff:])
	h.PayloadLen = le.Uint64(slot[offPayloadLen:])
	h.PayloadSum = le.Uint64(slot[offPayloadSum:])
	nStages := le.Uint32(slot[offStageCount:])
	h.Growth = math.Float64frombits(le.Uint64(slot[offGrowth:]))
	h.Tightening = math.Float64frombits(le.Uint64(slot[offTightness:]))

	if payloadOff != PayloadOffset {
		return h, fmt.Errorf("%w: payload offset %d, version 1 requires %d", ErrCorrupt, payloadOff, PayloadOffset)
	}
	if nStages > MaxStages {
		return h, fmt.Errorf("%w: %d stages, at most %d", ErrCorrupt, nStages, MaxStages)
	}
	if err := decodeTables(&h, slot, nStages); err != nil {
		return h, err
	}
	if err := h.Validate(); err != nil {
		return h, err
	}
	return h, nil
}

// decodeTables reads what a slot holds past its fixed fields: the stage
// table, or the fields of the variants that use its bytes (history,
// cuckoo, window).
func decodeTables(h *Header, slot []byte, nStages uint32) error {
	le := binary.LittleEndian
	if nStages > 0 {
		h.Stages = make([]Stage, nStages)
		for i := range h.Stages {
			e := slot[offStages+i*StageSize:]
			h.Stages[i] = Stage{
				Offset:    le.Uint64(e[0:]),
				M:         le.Uint64(e[8:]),
				K:         le.Uint32(e[16:]),
				BlockBits: le.Uint32(e[20:]),
				Capacity:  le.Uint64(e[24:]),
				TargetFPR: math.Float64frombits(le.Uint64(e[32:])),
				Count:     le.Uint64(e[40:]),
			}
		}
	}
	if l, ok := layoutOf(h.Variant); ok && l.history { // they share the stage table's bytes
		h.InitialCapacity = le.Uint64(slot[offInitial:])
		h.History = le.Uint64(slot[offHistory:])
		h.HistoryOffset = le.Uint64(slot[offHistoryOffset:])
		h.HistoryID = le.Uint64(slot[offHistoryID:])
	}
	if h.Variant == Cuckoo {
		h.MaxKicks = le.Uint32(slot[offMaxKicks:])
	}
	if h.Variant == Window {
		h.WindowGenerations = le.Uint32(slot[offWindowGenerations:])
		switch le.Uint32(slot[offWindowTimed:]) {
		case 0:
		case 1:
			h.WindowTimed = true
		default:
			return fmt.Errorf("%w: window: kind %d, want 0 (items) or 1 (time)", ErrCorrupt, le.Uint32(slot[offWindowTimed:]))
		}
		h.WindowLength = le.Uint64(slot[offWindowLength:])
		h.WindowSpan = le.Uint64(slot[offWindowSpan:])
		h.WindowOrigin = int64(le.Uint64(slot[offWindowOrigin:]))
		h.WindowEpoch = le.Uint64(slot[offWindowEpoch:])
		h.WindowFill = le.Uint64(slot[offWindowFill:])
	}
	return nil
}

// DecodeHeader picks the current header from the first HeaderSize bytes of a
// file: the slot with a valid checksum and the highest generation. When
// neither slot is valid it returns slot 0's error (bad magic, version,
// checksum or geometry), with slot 1's error in the message; a file with
// the magic in neither slot is not a filter file, and gets ErrBadMagic alone.
//
// When one slot is valid and the other is not, the valid one is returned
// without error: the other is what a crash while writing a header leaves.
// Whether that other slot was the newest header (then the file is read as
// it was one header write earlier) is reported by HeaderDamage and by
// Verify.
func DecodeHeader(b []byte) (Header, error) {
	h, _, err := decodeHeader(b)
	return h, err
}

// decodeHeader is DecodeHeader; damage describes the slot that was set
// aside when it may hold a newer header than the one returned (its own,
// unchecked, generation is not older, or its magic is gone), else nil.
func decodeHeader(b []byte) (h Header, damage, err error) {
	if len(b) < HeaderSize {
		// A short file that does not start like the magic (a 6-byte text
		// file, say) is foreign, not a truncated filter file.
		if n := min(len(b), len(Magic)); string(b[:n]) != Magic[:n] {
			return Header{}, nil, fmt.Errorf("%w: got %q", ErrBadMagic, b[:n])
		}
		return Header{}, nil, fmt.Errorf("%w: %d bytes, the header alone is %d", ErrTruncated, len(b), HeaderSize)
	}
	h0, err0 := decodeSlot(b[:SlotSize])
	h1, err1 := decodeSlot(b[SlotSize:HeaderSize])
	switch {
	case err0 == nil && err1 == nil:
		if h1.Generation > h0.Generation {
			return h1, nil, nil
		}
		return h0, nil, nil
	case err0 == nil:
		return h0, slotDamage(b, 1, h0, err1), nil
	case err1 == nil:
		return h1, slotDamage(b, 0, h1, err0), nil
	}
	if errors.Is(err0, ErrBadMagic) && errors.Is(err1, ErrBadMagic) {
		return Header{}, nil, err0 // not a filter file at all: no slot to speak of
	}
	return Header{}, nil, fmt.Errorf("slot 0: %w (slot 1: %v)", err0, err1)
}

// slotDamage describes slot i, which failed with err while the other slot,
// holding used, is valid: nil when slot i is the older one (its own
// generation field, unchecked, is below used's), which is what a torn
// write of a header that never became current leaves.
func slotDamage(b []byte, i int, used Header, err error) error {
	slot := b[i*SlotSize : (i+1)*SlotSize]
	gen := binary.LittleEndian.Uint64(slot[offGeneration:])
	if gen < used.Generation && !errors.Is(err, ErrBadMagic) {
		return nil
	}
	return fmt.Errorf("header slot %d, which says it holds generation %d (the header in use is generation %d), is damaged: %w",
		i, gen, used.Generation, err)
}

// slotFor returns the slot index a header of the given generation is written to.
func slotFor(generation uint64) int { return int(generation & 1) }

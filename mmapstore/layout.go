package mmapstore

import (
	"fmt"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"math"
	"slices"
	"sync"
)

// A Layout is the shape of a variant's payload as the header describes it:
// what Validate checks of a header of that variant, and the payload length
// the geometry needs. A variant's package picks its layout once, in its
// registration (RegisterVariant, through filterfile.Register).
type Layout struct {
	payload func(h *Header) (uint64, error)
	// staged: the header has a stage table and the file may carry the
	// space of a stage whose growth did not complete (Grow).
	staged bool
	// history: the header ties the payload to a history log (SetHistory).
	history bool
	// scheme reports whether a header of the layout may name a hashing
	// scheme; nil: bloomkit's own (hashing.Scheme.Valid).
	scheme func(hashing.Scheme) bool
}

// CellArray is the layout of one array of cells of cellBits bits (1: a bit
// array, 4: counters), in blocks of the first of blockBits (0: unblocked),
// or of any other of blockBits when the header says so.
func CellArray(cellBits uint32, blockBits ...uint32) Layout {
	if len(blockBits) == 0 {
		blockBits = []uint32{0}
	}
	return Layout{payload: func(h *Header) (uint64, error) { return h.arrayLen(cellBits, blockBits) }}
}

// Layouts of the payloads that are more than one array.
var (
	// StageTable: bit arrays, one a stage, in the header's stage table.
	StageTable = Layout{payload: (*Header).stagesLen, staged: true}
	// HistoryTable: one cache-line blocked bit array rebuilt from a
	// history log, and the fields that tie it to that log (InitialCapacity,
	// History, HistoryOffset, HistoryID); Growth its expansion.
	HistoryTable = Layout{payload: (*Header).historyLen, history: true}
	// ShardTable: fingerprint arrays of 8 or 16 bits behind a shard table
	// in the payload, which the variant's package checks.
	ShardTable = Layout{payload: (*Header).shardLen}
	// WindowRing: a ring of generations in one byte array behind its slot
	// table, and the window fields of Header (package window).
	WindowRing = Layout{payload: (*Header).windowLen}
	// CuckooTable: buckets of four packed fingerprints (package cuckoo).
	CuckooTable = Layout{payload: (*Header).cuckooLen}
	// RedisBloomChain: RedisBloom's Bloom chain behind its SCANDUMP header
	// chunk, hashed with RedisBloom's scheme 3 or 4 (package redisbloom/bf).
	RedisBloomChain = Layout{payload: (*Header).redisBloomBFLen,
		scheme: func(s hashing.Scheme) bool { return s == hashing.Scheme3 || s == hashing.Scheme4 }}
	// RedisBloomCuckoo: RedisBloom's cuckoo filters behind their SCANDUMP
	// header chunk, hashed with scheme 5 (package redisbloom/cf).
	RedisBloomCuckoo = Layout{payload: (*Header).redisBloomCFLen,
		scheme: func(s hashing.Scheme) bool { return s == hashing.Scheme5 }}
)

// variantLayout is one registered variant.
type variantLayout struct {
	name string
	Layout
}

var (
	layoutsMu sync.RWMutex
	layouts   = map[Variant]variantLayout{}
)

// RegisterVariant makes the files of tag decode with layout l, under name
// (Variant.String). A variant's package calls it once, through
// filterfile.Register. Registering a tag again under the same name
// replaces its layout; it panics, as a programming error, when the tag or
// the name is registered already for another, or l is the zero Layout.
func RegisterVariant(tag Variant, name string, l Layout) {
	if l.payload == nil || name == "" {
		panic(fmt.Sprintf("mmapstore: RegisterVariant of tag %d without a name or a layout", uint16(tag)))
	}
	layoutsMu.Lock()
	defer layoutsMu.Unlock()
	for t, o := range layouts {
		if (t == tag) != (o.name == name) {
			panic(fmt.Sprintf("mmapstore: RegisterVariant(%d, %q): tag %d is registered as %q", uint16(tag), name, uint16(t), o.name))
		}
	}
	layouts[tag] = variantLayout{name: name, Layout: l}
}

// layoutOf is the registered layout of v.
func layoutOf(v Variant) (variantLayout, bool) {
	layoutsMu.RLock()
	defer layoutsMu.RUnlock()
	l, ok := layouts[v]
	return l, ok
}

// staged reports whether files of v have a stage table (StageTable).
func staged(v Variant) bool { l, _ := layoutOf(v); return l.staged }

// hasHistory reports whether files of v are tied to a history log.
func hasHistory(v Variant) bool { l, _ := layoutOf(v); return l.history }

// HasHistory reports whether the file is tied to a history log beside it
// (HistoryTable: the log is the filter's state with the file).
func (h *Header) HasHistory() bool { return hasHistory(h.Variant) }

// Validate checks that h describes a filter this build can serve: a known
// variant and hashing scheme, and a geometry whose payload length
// follows from it.
// It does not look at any file.
func (h *Header) Validate() error {
	l, known := layoutOf(h.Variant)
	switch {
	case known && l.scheme != nil:
		if !l.scheme(h.Scheme) {
			return fmt.Errorf("%w: scheme %d in a %s file", ErrScheme, h.Scheme, h.Variant)
		}
	case !h.Scheme.Valid():
		return fmt.Errorf("%w: scheme %d (this build knows schemes 1 and 2)", ErrScheme, h.Scheme)
	}
	if h.Flags&^knownFlags != 0 {
		return h.invalid("unknown flags %#x", h.Flags&^knownFlags)
	}
	if !(h.TargetFPR > 0 && h.TargetFPR < 1) {
		return h.invalid("target false-positive rate %v outside (0,1)", h.TargetFPR)
	}
	if !known {
		return fmt.Errorf("%w: unknown variant tag %d", ErrCorrupt, uint16(h.Variant))
	}
	want, err := l.payload(h)
	if err != nil {
		return err
	}
	if h.PayloadLen != want {
		return h.invalid("payload length %d, geometry needs %d", h.PayloadLen, want)
	}
	return nil
}

// invalid is ErrCorrupt with the variant and the detail.
func (h *Header) invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, h.Variant, fmt.Sprintf(format, args...))
}

// checkGeom checks the geometry of one bit or counter array (what names it).
func (h *Header) checkGeom(what string, m uint64, k, blockBits uint32) error {
	if m == 0 || m > MaxCells {
		return h.invalid("%s: m = %d cells, want 1..%d", what, m, uint64(MaxCells))
	}
	if k == 0 || k > MaxK {
		return h.invalid("%s: k = %d, want 1..%d", what, k, MaxK)
	}
	switch blockBits {
	case 0:
	case 512, 256: // 256: the split-block layout, eight 32-bit lanes, k = 8
		if m%uint64(blockBits) != 0 {
			return h.invalid("%s: m = %d is not a whole number of %d-bit blocks", what, m, blockBits)
		}
		if blockBits == 256 && k != 8 {
			return h.invalid("%s: k = %d with 256-bit split blocks, want 8", what, k)
		}
	default:
		return h.invalid("%s: block size %d bits, want 0, 256 or 512", what, blockBits)
	}
	return nil
}

// arrayLen checks the geometry of one array of cells of wantCell bits in
// blocks of one of blockBits (0: unblocked) and returns the payload length
// it needs.
func (h *Header) arrayLen(wantCell uint32, blockBits []uint32) (uint64, error) {
	wantBlock := blockBits[0]
	if slices.Contains(blockBits, h.BlockBits) {
		wantBlock = h.BlockBits
	}
	if h.CellBits != wantCell || h.BlockBits != wantBlock {
		return 0, h.invalid("cell/block bits %d/%d, want %d/%d", h.CellBits, h.BlockBits, wantCell, wantBlock)
	}
	if len(h.Stages) != 0 {
		return 0, h.invalid("%d stages in an unstaged variant", len(h.Stages))
	}
	if err := h.checkGeom("filter", h.M, h.K, h.BlockBits); err != nil {
		return 0, err
	}
	return CellBytes(h.M, h.CellBits), nil
}

// historyLen checks a growing filter's table and history fields and
// returns the payload length its table needs.
func (h *Header) historyLen() (uint64, error) {
	if h.CellBits != 1 || h.BlockBits != 512 || len(h.Stages) != 0 {
		return 0, h.invalid("cell bits %d, block bits %d, %d stages; want 1, 512, 0", h.CellBits, h.BlockBits, len(h.Stages))
	}
	if err := h.checkGeom("table", h.M, h.K, h.BlockBits); err != nil {
		return 0, err
	}
	if !(h.Growth >= 2 && h.Growth <= 1024 && h.Growth == math.Trunc(h.Growth)) {
		return 0, h.invalid("expansion %v, want a whole number from 2 to 1024", h.Growth)
	}
	if h.InitialCapacity == 0 || h.Capacity < h.InitialCapacity {
		return 0, h.invalid("capacity %d, initial capacity %d", h.Capacity, h.InitialCapacity)
	}
	if h.HistoryOffset < LogHeaderSize || h.HistoryOffset > MaxCells {
		return 0, h.invalid("history offset %d", h.HistoryOffset)
	}
	return CellBytes(h.M, 1), nil
}

// stagesLen checks the stage table of a scalable filter and returns the
// payload length its stages need.
func (h *Header) stagesLen() (uint64, error) {
	if h.CellBits != 1 || len(h.Stages) == 0 {
		return 0, h.invalid("cell bits %d, %d stages", h.CellBits, len(h.Stages))
	}
	var want, total uint64
	for i, s := range h.Stages {
		if err := h.checkGeom(fmt.Sprintf("stage %d", i), s.M, s.K, s.BlockBits); err != nil {
			return 0, err
		}
		if s.Offset != want {
			return 0, h.invalid("stage %d at payload offset %d, want %d", i, s.Offset, want)
		}
		if !(s.TargetFPR > 0 && s.TargetFPR < 1) {
			return 0, h.invalid("stage %d target rate %v outside (0,1)", i, s.TargetFPR)
		}
		want += CellBytes(s.M, 1)
		total += s.M
		if want > MaxCells/8 {
			return 0, h.invalid("stages exceed %d bytes", uint64(MaxCells/8))
		}
	}
	if !(h.Growth >= 1 && h.Growth <= 1e6) || !(h.Tightening > 0 && h.Tightening < 1) {
		return 0, h.invalid("growth %v (want 1..1e6), tightening %v (want in (0,1))", h.Growth, h.Tightening)
	}
	if h.M != total {
		return 0, h.invalid("m = %d, stages hold %d", h.M, total)
	}
	return want, nil
}

// shardLen checks a fuse filter's shape and returns its payload length. The
// shard table in the payload says where each shard's fingerprints are; the
// fuse package checks it against M and PayloadLen. Here: the shape, and a
// length that can hold M cells.
func (h *Header) shardLen() (uint64, error) {
	if (h.CellBits != 8 && h.CellBits != 16) || h.K != 3 || h.BlockBits != 0 || len(h.Stages) != 0 {
		return 0, h.invalid("cell bits %d, k %d, block bits %d, %d stages; want 8 or 16, 3, 0, 0",
			h.CellBits, h.K, h.BlockBits, len(h.Stages))
	}
	if h.M == 0 || h.M > MaxCells/16 || h.PayloadLen%8 != 0 || h.PayloadLen > MaxCells/8 ||
		h.PayloadLen < SlotSize+CellBytes(h.M, h.CellBits) {
		return 0, h.invalid("m = %d cells in a payload of %d bytes", h.M, h.PayloadLen)
	}
	return h.PayloadLen, nil
}

// LogPath is the log beside the filter file at path: the history log of a
// file tied to one (HasHistory), or the write-ahead log a server keeps for
// a file it writes.
func LogPath(path string) string { return path + ".log" }

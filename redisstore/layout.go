package redisstore

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The layout in Redis, version 1. docs/redis.md is the specification; this
// block mirrors it.
//
// A filter named NAME is:
//
//	NAME:hdr                       hash: the header fields below
//	NAME:seg:{NAME:GEN:I}          string: segment I of generation GEN
//	NAME:cnt:{NAME:GEN:I}          string: integer, Adds that were new in segment I
//
// The payload of the partitioned filter file (the words of its 512-bit
// blocks, little-endian) is cut into segments of SegmentBytes bytes (the
// last one may be shorter); segment I holds payload bytes
// [I·SegmentBytes, (I+1)·SegmentBytes), byte for byte. Pushing a file is a
// copy of its payload and pulling one back is the reverse: no bit is
// reordered. Redis's SETBIT and GETBIT number the bits of a byte from the
// most significant one, while the file (and so the string) numbers them from
// the least significant one, so bit p of a block at byte offset o is GETBIT
// offset 8·o + (p XOR 7).
//
// The hash tag {NAME:GEN:I} puts a segment and its counter in one Cluster
// slot (the Add script touches both) and spreads the segments of a filter,
// and of different filters, over the slots. The header is read only when a
// client attaches, so its slot does not matter.
const (
	// LayoutVersion is the version of the layout above; Attach refuses
	// other versions. Version 1: header hash, segments of whole blocks,
	// counters beside the segments, generations for replacement.
	LayoutVersion = 1

	// DefaultSegmentBytes is the segment size of filters made without
	// WithSegmentBytes: 1 MiB, 16384 blocks. Small enough that a Cluster
	// moves a segment between nodes without stalling, large enough that a
	// 1 GB filter is a thousand keys.
	DefaultSegmentBytes = 1 << 20
	// MaxSegmentBytes is the largest segment: Redis strings hold at most
	// 512 MiB.
	MaxSegmentBytes = 512 << 20

	blockBytes = blocked.BlockBits / 8

	// maxNameLen bounds a filter's name, to keep keys short.
	maxNameLen = 512

	// MaxSegments bounds the number of segments of a filter (a client keeps
	// their key names in memory): 2^20, 1 TiB at the default segment size.
	MaxSegments = 1 << 20
)

// Header fields (the hash at NAME:hdr). All values are decimal strings;
// target_p is the shortest decimal that reads back as the same float64.
const (
	fieldLayout     = "layout"        // LayoutVersion
	fieldVariant    = "variant"       // mmapstore variant tag (2: partitioned)
	fieldHash       = "hash"          // hashing.Algorithm
	fieldSeed       = "seed"          // hash seed
	fieldM          = "m"             // bits, whole 512-bit blocks
	fieldK          = "k"             // probes per key
	fieldBlockBits  = "block_bits"    // 512
	fieldCapacity   = "capacity"      // expected items n
	fieldTargetP    = "target_p"      // target false-positive rate
	fieldSegBytes   = "segment_bytes" // bytes per segment, whole blocks
	fieldGeneration = "generation"    // which segment keys are current
	fieldBaseCount  = "base_count"    // items counted before the counters (a pushed file's count)
)

var headerFields = []string{fieldLayout, fieldVariant, fieldHash, fieldSeed, fieldM, fieldK, fieldBlockBits,
	fieldCapacity, fieldTargetP, fieldSegBytes, fieldGeneration, fieldBaseCount}

// header is a decoded, validated header.
type header struct {
	seed       uint64
	m          uint64
	k          uint32
	capacity   uint64
	targetP    float64
	segBytes   uint64
	generation uint64
	baseCount  uint64
}

func (h *header) payloadBytes() uint64 { return h.m / 8 }
func (h *header) blocks() uint64       { return h.m / blocked.BlockBits }
func (h *header) segments() uint64 {
	return (h.payloadBytes() + h.segBytes - 1) / h.segBytes
}

// segLen returns the length in bytes of segment i.
func (h *header) segLen(i uint64) uint64 {
	return min(h.segBytes, h.payloadBytes()-i*h.segBytes)
}

// fileHeader returns the mmapstore header of the same filter, for Validate
// and for pulled files.
func (h *header) fileHeader() mmapstore.Header {
	return mmapstore.Header{
		Version:    mmapstore.CurrentVersion,
		Variant:    mmapstore.Partitioned,
		Hash:       hashing.Algorithm,
		Seed:       h.seed,
		M:          h.m,
		K:          h.k,
		BlockBits:  blocked.BlockBits,
		CellBits:   1,
		Capacity:   h.capacity,
		TargetP:    h.targetP,
		PayloadLen: h.payloadBytes(),
	}
}

// fields returns the header as HSET arguments.
func (h *header) fields() []any {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return []any{
		fieldLayout, u(LayoutVersion),
		fieldVariant, u(uint64(mmapstore.Partitioned)),
		fieldHash, u(uint64(hashing.Algorithm)),
		fieldSeed, u(h.seed),
		fieldM, u(h.m),
		fieldK, u(uint64(h.k)),
		fieldBlockBits, u(blocked.BlockBits),
		fieldCapacity, u(h.capacity),
		fieldTargetP, strconv.FormatFloat(h.targetP, 'g', -1, 64),
		fieldSegBytes, u(h.segBytes),
		fieldGeneration, u(h.generation),
		fieldBaseCount, u(h.baseCount),
	}
}

// checkSegBytes checks a segment size.
func checkSegBytes(n uint64) error {
	if n == 0 || n%blockBytes != 0 || n > MaxSegmentBytes {
		return fmt.Errorf("%w: segment size %d bytes, want a multiple of %d up to %d", ErrInvalid, n, blockBytes, MaxSegmentBytes)
	}
	return nil
}

// checkSegments checks that h's filter fits in MaxSegments segments.
func checkSegments(h header) error {
	if n := h.segments(); n > MaxSegments {
		return fmt.Errorf("%w: %d bytes in segments of %d make %d segments, at most %d", ErrTooLarge, h.payloadBytes(), h.segBytes, n, MaxSegments)
	}
	return nil
}

// decodeHeader parses and validates the fields of a header hash. An empty
// map is ErrNotFound.
func decodeHeader(name string, f map[string]string) (header, error) {
	var h header
	if len(f) == 0 {
		return h, fmt.Errorf("%w: %q (no key %s)", ErrNotFound, name, headerKey(name))
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrHeader, headerKey(name), fmt.Sprintf(format, args...))
	}
	var err error
	num := func(field string, bits int) uint64 {
		if err != nil {
			return 0
		}
		s, ok := f[field]
		if !ok {
			err = bad("field %s missing", field)
			return 0
		}
		v, perr := strconv.ParseUint(s, 10, bits)
		if perr != nil {
			err = bad("field %s = %q is not a %d-bit unsigned integer", field, s, bits)
		}
		return v
	}
	layout := num(fieldLayout, 64)
	if err != nil {
		return h, err
	}
	if layout != LayoutVersion {
		return h, fmt.Errorf("%w: %s: layout %d (this build reads %d)", ErrFormat, headerKey(name), layout, LayoutVersion)
	}
	variant := num(fieldVariant, 16)
	if err == nil && mmapstore.Variant(variant) != mmapstore.Partitioned {
		return h, fmt.Errorf("%w: %s holds a %s filter", ErrVariant, headerKey(name), mmapstore.Variant(variant))
	}
	hash := num(fieldHash, 16)
	h.seed = num(fieldSeed, 64)
	h.m = num(fieldM, 64)
	h.k = uint32(num(fieldK, 32))
	blockBits := num(fieldBlockBits, 32)
	h.capacity = num(fieldCapacity, 64)
	h.segBytes = num(fieldSegBytes, 64)
	h.generation = num(fieldGeneration, 64)
	h.baseCount = num(fieldBaseCount, 64)
	if err != nil {
		return h, err
	}
	ps, ok := f[fieldTargetP]
	if !ok {
		return h, bad("field %s missing", fieldTargetP)
	}
	if h.targetP, err = strconv.ParseFloat(ps, 64); err != nil {
		return h, bad("field %s = %q is not a number", fieldTargetP, ps)
	}
	if blockBits != blocked.BlockBits {
		return h, bad("block size %d bits, want %d", blockBits, blocked.BlockBits)
	}
	fh := h.fileHeader()
	fh.Hash = uint16(hash)
	if verr := fh.Validate(); verr != nil {
		return h, fmt.Errorf("%w: %s: %w", ErrHeader, headerKey(name), verr)
	}
	if verr := checkSegBytes(h.segBytes); verr != nil {
		return h, fmt.Errorf("%w: %s: %w", ErrHeader, headerKey(name), verr)
	}
	if verr := checkSegments(h); verr != nil {
		return h, fmt.Errorf("%w: %s: %w", ErrHeader, headerKey(name), verr)
	}
	return h, nil
}

// checkName checks a filter's name: not empty, at most maxNameLen bytes, no
// braces (they would change the hash tags) and no control characters.
func checkName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("%w: filter name of %d bytes, want 1..%d", ErrInvalid, len(name), maxNameLen)
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r == '{' || r == '}' || r < 0x20 || r == 0x7f }); i >= 0 {
		return fmt.Errorf("%w: filter name %q: braces and control characters are not allowed (byte %d)", ErrInvalid, name, i)
	}
	return nil
}

func headerKey(name string) string { return name + ":hdr" }

func segmentKey(name string, gen, i uint64) string {
	return fmt.Sprintf("%s:seg:{%s:%d:%d}", name, name, gen, i)
}

func counterKey(name string, gen, i uint64) string {
	return fmt.Sprintf("%s:cnt:{%s:%d:%d}", name, name, gen, i)
}

// geometry returns the header of a new filter for n items at rate p.
func geometry(n uint64, p float64, c config) (header, error) {
	m, k, err := blocked.Params(n, p)
	if err != nil {
		return header{}, err
	}
	return header{seed: c.seed, m: m, k: k, capacity: n, targetP: p, segBytes: c.segBytes}, nil
}

// explicitGeometry returns the header of a new filter of m bits (rounded up
// to whole blocks) and k probes, with the capacity and rate that
// partitioned gives the same geometry.
func explicitGeometry(m uint64, k uint32, c config) (header, error) {
	if m == 0 || k == 0 || k > mmapstore.MaxK {
		return header{}, fmt.Errorf("%w: m = %d, k = %d", ErrInvalid, m, k)
	}
	if m > mmapstore.MaxCells-blocked.BlockBits {
		return header{}, fmt.Errorf("%w: m = %d bits", ErrTooLarge, m)
	}
	m = (m + blocked.BlockBits - 1) / blocked.BlockBits * blocked.BlockBits
	n := uint64(math.Max(1, math.Floor(float64(m)*math.Ln2/float64(k))))
	p := blocked.FPR(m, n, k)
	p = math.Min(math.Max(p, math.SmallestNonzeroFloat64), math.Nextafter(1, 0))
	return header{seed: c.seed, m: m, k: k, capacity: n, targetP: p, segBytes: c.segBytes}, nil
}

// sameFilter reports how want and got differ in what defines the bits, or
// nil when they do not.
func sameFilter(name string, want, got header) error {
	var diffs []string
	if want.m != got.m || want.k != got.k {
		diffs = append(diffs, fmt.Sprintf("geometry m = %d, k = %d in redis, want m = %d, k = %d", got.m, got.k, want.m, want.k))
	}
	if want.seed != got.seed {
		diffs = append(diffs, fmt.Sprintf("seed %d in redis, want %d", got.seed, want.seed))
	}
	if want.segBytes != got.segBytes {
		diffs = append(diffs, fmt.Sprintf("segments of %d bytes in redis, want %d", got.segBytes, want.segBytes))
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %q: %s", ErrMismatch, name, strings.Join(diffs, "; "))
}

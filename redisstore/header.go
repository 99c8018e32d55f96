package redisstore

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/zeebo/xxh3"
)

// Header fields (the hash at NAME:hdr). All values are decimal strings;
// target_p is the shortest decimal that reads back as the same float64.
const (
	fieldLayout     = "layout"        // LayoutVersion
	fieldVariant    = "variant"       // mmapstore variant tag (2: partitioned)
	fieldHash       = "hash"          // bloomkit.Scheme
	fieldSeed       = "seed"          // hash seed
	fieldM          = "m"             // bits, whole 512-bit blocks (stage 0)
	fieldK          = "k"             // probes per key (stage 0)
	fieldBlockBits  = "block_bits"    // 512
	fieldCapacity   = "capacity"      // expected items n (stage 0)
	fieldTargetP    = "target_p"      // target false-positive rate (the whole filter)
	fieldSegBytes   = "segment_bytes" // bytes per segment, whole blocks
	fieldGeneration = "generation"    // which segment keys are current
	fieldBaseCount  = "base_count"    // items counted before the counters (a pushed file's count)
	// Layout 2.
	fieldChecksum   = "checksum"   // XXH3-64 of the other fields (see checksum)
	fieldShards     = "shards"     // 0: fixed size; else shards per stage
	fieldStages     = "stages"     // number of stages (1 for a fixed filter)
	fieldGrowth     = "growth"     // capacity ratio between stages
	fieldTightening = "tightening" // rate ratio between stages
	fieldMaxStages  = "max_stages" // growth limit: stages
	fieldMaxBytes   = "max_bytes"  // growth limit: bytes of all stages (0: none)
	fieldStagePfx   = "stage."     // stage.S = "m k capacity target_p" for S >= 1
)

var headerFields = []string{fieldLayout, fieldVariant, fieldHash, fieldSeed, fieldM, fieldK, fieldBlockBits,
	fieldCapacity, fieldTargetP, fieldSegBytes, fieldGeneration, fieldBaseCount}

// stage is the geometry of one stage.
type stage struct {
	m        uint64
	k        uint32
	capacity uint64
	targetP  float64
}

func (s stage) blocks() uint64 { return s.m / partitioned.BlockBits }

// header is a decoded, validated header.
type header struct {
	layout     uint64
	scheme     bloomkit.Scheme
	seed       uint64
	nStages    uint64  // while decoding: the stages the header names
	stages     []stage // stages[0] is m, k, capacity; one entry for a fixed filter
	targetP    float64 // the filter's target (stage 0's for a fixed filter)
	segBytes   uint64
	generation uint64
	baseCount  uint64
	sum        string // the checksum field as read ("" in layout 1)

	// Growing filters only (shards > 0).
	shards    uint64
	growth    float64
	tight     float64
	maxStages int
	maxBytes  uint64
}

func (h *header) growing() bool { return h.shards > 0 }

// first returns stage 0, the whole filter when it does not grow.
func (h *header) first() stage { return h.stages[0] }

// unitBytes returns the bytes of stage s that share one hash tag: the whole
// stage of a fixed filter (cut into segments with tags of their own) or one
// shard.
func (h *header) unitBytes(s int) uint64 {
	b := h.stages[s].m / 8
	if h.growing() {
		b /= h.shards
	}
	return b
}

// segsPerUnit returns the number of segments of one unit of stage s.
func (h *header) segsPerUnit(s int) uint64 {
	return (h.unitBytes(s) + h.segBytes - 1) / h.segBytes
}

// segLen returns the length in bytes of segment i of a unit of stage s.
func (h *header) segLen(s int, i uint64) uint64 {
	return min(h.segBytes, h.unitBytes(s)-i*h.segBytes)
}

// segments returns the number of segments of every stage.
func (h *header) segments() uint64 {
	n := uint64(0)
	for s := range h.stages {
		u := uint64(1)
		if h.growing() {
			u = h.shards
		}
		n += u * h.segsPerUnit(s)
	}
	return n
}

// totalBytes returns the bytes of every stage.
func (h *header) totalBytes() uint64 {
	n := uint64(0)
	for _, s := range h.stages {
		n += s.m / 8
	}
	return n
}

// fileHeader returns the mmapstore header of a fixed filter, for pulled
// files.
func (h *header) fileHeader() mmapstore.Header {
	s := h.first()
	return mmapstore.Header{
		Version:    mmapstore.CurrentVersion,
		Variant:    mmapstore.Partitioned,
		Scheme:     h.scheme,
		Seed:       h.seed,
		M:          s.m,
		K:          s.k,
		BlockBits:  partitioned.BlockBits,
		CellBits:   1,
		Capacity:   s.capacity,
		TargetFPR:  s.targetP,
		PayloadLen: s.m / 8,
	}
}

func fmtU(v uint64) string  { return strconv.FormatUint(v, 10) }
func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fieldMap returns the header's fields, checksum included.
func (h *header) fieldMap() map[string]string {
	s := h.first()
	f := map[string]string{
		fieldLayout:     fmtU(LayoutVersion),
		fieldVariant:    fmtU(uint64(mmapstore.Partitioned)),
		fieldHash:       fmtU(uint64(h.scheme)),
		fieldSeed:       fmtU(h.seed),
		fieldM:          fmtU(s.m),
		fieldK:          fmtU(uint64(s.k)),
		fieldBlockBits:  fmtU(partitioned.BlockBits),
		fieldCapacity:   fmtU(s.capacity),
		fieldTargetP:    fmtF(h.targetP),
		fieldSegBytes:   fmtU(h.segBytes),
		fieldGeneration: fmtU(h.generation),
		fieldBaseCount:  fmtU(h.baseCount),
		fieldShards:     fmtU(h.shards),
		fieldStages:     fmtU(uint64(len(h.stages))),
	}
	if h.growing() {
		f[fieldGrowth] = fmtF(h.growth)
		f[fieldTightening] = fmtF(h.tight)
		f[fieldMaxStages] = fmtU(uint64(h.maxStages))
		f[fieldMaxBytes] = fmtU(h.maxBytes)
		for i, st := range h.stages[1:] {
			f[fieldStagePfx+strconv.Itoa(i+1)] = fmt.Sprintf("%d %d %d %s", st.m, st.k, st.capacity, fmtF(st.targetP))
		}
	}
	f[fieldChecksum] = checksum(f)
	return f
}

// fields returns the header as HSET arguments.
func (h *header) fields() []any {
	f := h.fieldMap()
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	sort.Strings(names)
	args := make([]any, 0, 2*len(f))
	for _, k := range names {
		args = append(args, k, f[k])
	}
	return args
}

// checksum returns the checksum of header fields f: XXH3-64 (seed 0) of
// "name=value\n" for every field but the checksum, sorted by name, in
// decimal.
func checksum(f map[string]string) string {
	names := make([]string, 0, len(f))
	for k := range f {
		if k != fieldChecksum {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(f[k])
		b.WriteByte('\n')
	}
	return fmtU(xxh3.HashString(b.String()))
}

// fieldReader parses the fields of a header hash, remembering the first
// error, so that a decoder reads field after field and checks once.
type fieldReader struct {
	key string // the header's key, for messages
	f   map[string]string
	err error
}

// bad returns an ErrHeader about the header.
func (r *fieldReader) bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrHeader, r.key, fmt.Sprintf(format, args...))
}

// field returns the value of a field, or "" and an error when it is missing.
func (r *fieldReader) field(name string) (string, bool) {
	if r.err != nil {
		return "", false
	}
	s, ok := r.f[name]
	if !ok {
		r.err = r.bad("field %s missing", name)
	}
	return s, ok
}

// num returns an unsigned field of at most bits bits.
func (r *fieldReader) num(name string, bits int) uint64 {
	s, ok := r.field(name)
	if !ok {
		return 0
	}
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		r.err = r.bad("field %s = %q is not a %d-bit unsigned integer", name, s, bits)
	}
	return v
}

// float returns a floating-point field.
func (r *fieldReader) float(name string) float64 {
	s, ok := r.field(name)
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.err = r.bad("field %s = %q is not a number", name, s)
	}
	return v
}

// decodeHeader parses and validates the fields of a header hash. An empty
// map is ErrNotFound.
func decodeHeader(name string, f map[string]string) (header, error) {
	var h header
	if len(f) == 0 {
		return h, fmt.Errorf("%w: %q (no key %s)", ErrNotFound, name, headerKey(name))
	}
	r := &fieldReader{key: headerKey(name), f: f}
	if err := h.decodeVersion(r); err != nil {
		return h, err
	}
	if err := h.decodeFirst(r); err != nil {
		return h, err
	}
	if err := h.decodeStages(r); err != nil {
		return h, err
	}
	if err := checkSegBytes(h.segBytes); err != nil {
		return h, fmt.Errorf("%w: %s: %w", ErrHeader, r.key, err)
	}
	if err := checkSegments(&h); err != nil {
		return h, fmt.Errorf("%w: %s: %w", ErrHeader, r.key, err)
	}
	return h, nil
}

// decodeVersion reads the layout version, checks the checksum (layout 2)
// and the variant.
func (h *header) decodeVersion(r *fieldReader) error {
	h.layout = r.num(fieldLayout, 64)
	if r.err != nil {
		return r.err
	}
	if h.layout != 1 && h.layout != 2 {
		return fmt.Errorf("%w: %s: layout %d (this build reads 1 and 2)", ErrFormat, r.key, h.layout)
	}
	if h.layout == 2 {
		sum, ok := r.f[fieldChecksum]
		if !ok {
			return r.bad("field %s missing", fieldChecksum)
		}
		if want := checksum(r.f); sum != want {
			return r.bad("checksum %s, the fields give %s: the header was edited or damaged", sum, want)
		}
		h.sum = sum
	}
	variant := r.num(fieldVariant, 16)
	if r.err == nil && mmapstore.Variant(variant) != mmapstore.Partitioned {
		return fmt.Errorf("%w: %s holds a %s filter", ErrVariant, r.key, mmapstore.Variant(variant))
	}
	return r.err
}

// decodeFirst reads the fields every layout has (stage 0's geometry among
// them) and, for a growing filter, its growth fields.
func (h *header) decodeFirst(r *fieldReader) error {
	h.scheme = bloomkit.Scheme(r.num(fieldHash, 16))
	h.seed = r.num(fieldSeed, 64)
	var s0 stage
	s0.m = r.num(fieldM, 64)
	s0.k = uint32(r.num(fieldK, 32))
	blockBits := r.num(fieldBlockBits, 32)
	s0.capacity = r.num(fieldCapacity, 64)
	h.segBytes = r.num(fieldSegBytes, 64)
	h.generation = r.num(fieldGeneration, 64)
	h.baseCount = r.num(fieldBaseCount, 64)
	h.targetP = r.float(fieldTargetP)
	h.nStages = 1
	if h.layout == 2 {
		h.shards = r.num(fieldShards, 64)
		h.nStages = r.num(fieldStages, 64)
	}
	if r.err != nil {
		return r.err
	}
	if !h.scheme.Valid() || (h.layout == 1 && h.scheme != bloomkit.Scheme1) {
		return r.bad("hash scheme %d unknown to layout %d", h.scheme, h.layout)
	}
	if blockBits != partitioned.BlockBits {
		return r.bad("block size %d bits, want %d", blockBits, partitioned.BlockBits)
	}
	if !(h.targetP > 0 && h.targetP < 1) {
		return r.bad("target rate %v outside (0,1)", h.targetP)
	}
	s0.targetP = h.targetP
	if h.shards == 0 && h.nStages != 1 {
		return r.bad("%d stages in a filter that does not grow", h.nStages)
	}
	if h.shards > 0 {
		if err := h.decodeGrowth(r); err != nil {
			return err
		}
		s0.targetP = h.targetP * (1 - h.tight)
	}
	h.stages = []stage{s0}
	return nil
}

// decodeGrowth reads the fields of a growing filter.
func (h *header) decodeGrowth(r *fieldReader) error {
	if h.shards > MaxSegments {
		return r.bad("%d shards", h.shards)
	}
	h.growth = r.float(fieldGrowth)
	h.tight = r.float(fieldTightening)
	h.maxStages = int(r.num(fieldMaxStages, 16))
	h.maxBytes = r.num(fieldMaxBytes, 64)
	if r.err != nil {
		return r.err
	}
	if !(h.growth >= 1 && h.growth <= 1e6) || !(h.tight > 0 && h.tight < 1) {
		return r.bad("growth %v, tightening %v", h.growth, h.tight)
	}
	if h.maxStages < 1 || h.maxStages > DefaultMaxStages || h.nStages < 1 || h.nStages > uint64(h.maxStages) {
		return r.bad("%d stages, limit %d (at most %d)", h.nStages, h.maxStages, DefaultMaxStages)
	}
	return nil
}

// decodeStages reads the stages after the first, as recorded (never
// recomputed: a filter answers by the geometry it was made with), and
// checks every stage's geometry.
func (h *header) decodeStages(r *fieldReader) error {
	for i := uint64(1); i < h.nStages; i++ {
		v, ok := r.f[fieldStagePfx+strconv.FormatUint(i, 10)]
		if !ok {
			return r.bad("field %s%d missing", fieldStagePfx, i)
		}
		var st stage
		var ps string
		if n, err := fmt.Sscanf(v, "%d %d %d %s", &st.m, &st.k, &st.capacity, &ps); err != nil || n != 4 {
			return r.bad("field %s%d = %q is not \"m k capacity target_p\"", fieldStagePfx, i, v)
		}
		p, err := strconv.ParseFloat(ps, 64)
		if err != nil {
			return r.bad("field %s%d = %q: target_p is not a number", fieldStagePfx, i, v)
		}
		st.targetP = p
		h.stages = append(h.stages, st)
	}
	for i, st := range h.stages {
		fh := mmapstore.Header{
			Version: mmapstore.CurrentVersion, Variant: mmapstore.Partitioned,
			// The scheme is checked above; Validate checks the geometry.
			Scheme: bloomkit.Scheme1,
			Seed:   h.seed, M: st.m, K: st.k, BlockBits: partitioned.BlockBits, CellBits: 1,
			Capacity: st.capacity, TargetFPR: st.targetP, PayloadLen: st.m / 8,
		}
		if err := fh.Validate(); err != nil {
			return fmt.Errorf("%w: %s: stage %d: %w", ErrHeader, r.key, i, err)
		}
		if h.growing() && st.blocks()%h.shards != 0 {
			return r.bad("stage %d: %d blocks is not a multiple of %d shards", i, st.blocks(), h.shards)
		}
	}
	return nil
}

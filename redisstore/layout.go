package redisstore

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The layout in Redis. docs/redis.md is the specification; this block
// mirrors it.
//
// A filter named NAME is a header and segments:
//
//	NAME:hdr                       hash: the header fields below
//
// A fixed-size filter (one stage) is cut into segments with a hash tag of
// their own:
//
//	NAME:seg:{NAME:GEN:I}          string: segment I of generation GEN
//	NAME:cnt:{NAME:GEN:I}          string: integer, Adds that were new in segment I
//
// A growing filter has stages, and every stage is cut into the same number
// of shards (the header's "shards"); shard J of every stage carries the hash
// tag {NAME:GEN:J}, so that one script sees a key's block in every stage:
//
//	NAME:seg:{NAME:GEN:J}:S:I      string: segment I of shard J of stage S
//	NAME:cnt:{NAME:GEN:J}:S        string: integer, Adds that were new in shard J of stage S
//
// A stage's payload is the payload of a partitioned filter file (the words
// of its 512-bit blocks, little-endian). A fixed filter's payload is cut
// into segments of SegmentBytes bytes (the last one may be shorter);
// segment I holds payload bytes [I·SegmentBytes, (I+1)·SegmentBytes), byte
// for byte, so pushing a file is a copy of its payload. A growing filter's
// stage has a number of blocks that is a multiple of the shard count;
// shard J is the J-th equal slice of the payload, itself cut into
// segments. Since Reduce(H1, J·B)/B = Reduce(H1, J), a key falls in the
// same shard in every stage.
//
// Redis's SETBIT and GETBIT number the bits of a byte from the most
// significant one, while the file (and so the string) numbers them from the
// least significant one, so bit p of a block at byte offset o is GETBIT
// offset 8·o + (p XOR 7).
const (
	// LayoutVersion is the version of the layout above that this build
	// writes; Attach reads versions 1 and 2 and refuses others.
	//
	// Version 1: header hash, segments of whole blocks, counters beside
	// the segments, generations for replacement; hashing scheme 1.
	// Version 2: a header checksum, the hashing scheme in "hash", growing
	// filters (stages in shards).
	LayoutVersion = 2

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

	// Shards is the number of shards of every stage of a growing filter:
	// the hash tags its keys spread over in a Redis Cluster.
	Shards = 16

	// DefaultGrowth and DefaultTightening are the stage ratios of a growing
	// filter, as in the scalable package: stage i holds n·2^i keys at rate
	// p·(1-r)·r^i with r = 0.85, so the compound rate stays below p.
	DefaultGrowth     = 2.0
	DefaultTightening = 0.85

	// DefaultMaxStages is the default and largest stage limit of a growing
	// filter.
	DefaultMaxStages = 64
)

// Header fields (the hash at NAME:hdr). All values are decimal strings;
// target_p is the shortest decimal that reads back as the same float64.
const (
	fieldLayout     = "layout"        // LayoutVersion
	fieldVariant    = "variant"       // mmapstore variant tag (2: partitioned)
	fieldHash       = "hash"          // hashing.Scheme
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

func (s stage) blocks() uint64 { return s.m / blocked.BlockBits }

// header is a decoded, validated header.
type header struct {
	layout     uint64
	scheme     hashing.Scheme
	seed       uint64
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
		Hash:       uint16(h.scheme),
		Seed:       h.seed,
		M:          s.m,
		K:          s.k,
		BlockBits:  blocked.BlockBits,
		CellBits:   1,
		Capacity:   s.capacity,
		TargetP:    s.targetP,
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
		fieldBlockBits:  fmtU(blocked.BlockBits),
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

// checkSegBytes checks a segment size.
func checkSegBytes(n uint64) error {
	if n == 0 || n%blockBytes != 0 || n > MaxSegmentBytes {
		return fmt.Errorf("%w: segment size %d bytes, want a multiple of %d up to %d", ErrInvalid, n, blockBytes, MaxSegmentBytes)
	}
	return nil
}

// checkSegments checks that h's filter fits in MaxSegments segments.
func checkSegments(h *header) error {
	if n := h.segments(); n > MaxSegments {
		return fmt.Errorf("%w: %d bytes in segments of %d make %d segments, at most %d", ErrTooLarge, h.totalBytes(), h.segBytes, n, MaxSegments)
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
	float := func(field string) float64 {
		if err != nil {
			return 0
		}
		s, ok := f[field]
		if !ok {
			err = bad("field %s missing", field)
			return 0
		}
		v, perr := strconv.ParseFloat(s, 64)
		if perr != nil {
			err = bad("field %s = %q is not a number", field, s)
		}
		return v
	}
	h.layout = num(fieldLayout, 64)
	if err != nil {
		return h, err
	}
	if h.layout != 1 && h.layout != 2 {
		return h, fmt.Errorf("%w: %s: layout %d (this build reads 1 and 2)", ErrFormat, headerKey(name), h.layout)
	}
	if h.layout == 2 {
		sum, ok := f[fieldChecksum]
		if !ok {
			return h, bad("field %s missing", fieldChecksum)
		}
		if want := checksum(f); sum != want {
			return h, bad("checksum %s, the fields give %s: the header was edited or damaged", sum, want)
		}
		h.sum = sum
	}
	variant := num(fieldVariant, 16)
	if err == nil && mmapstore.Variant(variant) != mmapstore.Partitioned {
		return h, fmt.Errorf("%w: %s holds a %s filter", ErrVariant, headerKey(name), mmapstore.Variant(variant))
	}
	h.scheme = hashing.Scheme(num(fieldHash, 16))
	h.seed = num(fieldSeed, 64)
	var s0 stage
	s0.m = num(fieldM, 64)
	s0.k = uint32(num(fieldK, 32))
	blockBits := num(fieldBlockBits, 32)
	s0.capacity = num(fieldCapacity, 64)
	h.segBytes = num(fieldSegBytes, 64)
	h.generation = num(fieldGeneration, 64)
	h.baseCount = num(fieldBaseCount, 64)
	h.targetP = float(fieldTargetP)
	nStages := uint64(1)
	if h.layout == 2 {
		h.shards = num(fieldShards, 64)
		nStages = num(fieldStages, 64)
	}
	if err != nil {
		return h, err
	}
	if !h.scheme.Valid() || (h.layout == 1 && h.scheme != hashing.Scheme1) {
		return h, bad("hash scheme %d unknown to layout %d", h.scheme, h.layout)
	}
	if blockBits != blocked.BlockBits {
		return h, bad("block size %d bits, want %d", blockBits, blocked.BlockBits)
	}
	if !(h.targetP > 0 && h.targetP < 1) {
		return h, bad("target rate %v outside (0,1)", h.targetP)
	}
	s0.targetP = h.targetP
	if h.shards == 0 && nStages != 1 {
		return h, bad("%d stages in a filter that does not grow", nStages)
	}
	if h.shards > 0 {
		if h.shards > MaxSegments {
			return h, bad("%d shards", h.shards)
		}
		h.growth = float(fieldGrowth)
		h.tight = float(fieldTightening)
		h.maxStages = int(num(fieldMaxStages, 16))
		h.maxBytes = num(fieldMaxBytes, 64)
		if err != nil {
			return h, err
		}
		if !(h.growth >= 1 && h.growth <= 1e6) || !(h.tight > 0 && h.tight < 1) {
			return h, bad("growth %v, tightening %v", h.growth, h.tight)
		}
		if h.maxStages < 1 || h.maxStages > DefaultMaxStages || nStages < 1 || nStages > uint64(h.maxStages) {
			return h, bad("%d stages, limit %d (at most %d)", nStages, h.maxStages, DefaultMaxStages)
		}
		s0.targetP = h.targetP * (1 - h.tight)
	}
	h.stages = append(h.stages, s0)
	for i := uint64(1); i < nStages; i++ {
		v, ok := f[fieldStagePfx+strconv.FormatUint(i, 10)]
		if !ok {
			return h, bad("field %s%d missing", fieldStagePfx, i)
		}
		var st stage
		var ps string
		if n, serr := fmt.Sscanf(v, "%d %d %d %s", &st.m, &st.k, &st.capacity, &ps); serr != nil || n != 4 {
			return h, bad("field %s%d = %q is not \"m k capacity target_p\"", fieldStagePfx, i, v)
		}
		p, perr := strconv.ParseFloat(ps, 64)
		if perr != nil {
			return h, bad("field %s%d = %q: target_p is not a number", fieldStagePfx, i, v)
		}
		st.targetP = p
		h.stages = append(h.stages, st)
	}
	for i, st := range h.stages {
		fh := mmapstore.Header{
			Version: mmapstore.CurrentVersion, Variant: mmapstore.Partitioned,
			// The scheme is checked above; Validate checks the geometry.
			Hash: uint16(hashing.Scheme1),
			Seed: h.seed, M: st.m, K: st.k, BlockBits: blocked.BlockBits, CellBits: 1,
			Capacity: st.capacity, TargetP: st.targetP, PayloadLen: st.m / 8,
		}
		if verr := fh.Validate(); verr != nil {
			return h, fmt.Errorf("%w: %s: stage %d: %w", ErrHeader, headerKey(name), i, verr)
		}
		if h.growing() && st.blocks()%h.shards != 0 {
			return h, bad("stage %d: %d blocks is not a multiple of %d shards", i, st.blocks(), h.shards)
		}
	}
	if verr := checkSegBytes(h.segBytes); verr != nil {
		return h, fmt.Errorf("%w: %s: %w", ErrHeader, headerKey(name), verr)
	}
	if verr := checkSegments(&h); verr != nil {
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

// segmentKey returns the key of segment i of a fixed filter.
func segmentKey(name string, gen, i uint64) string {
	return fmt.Sprintf("%s:seg:{%s:%d:%d}", name, name, gen, i)
}

// counterKey returns the counter of segment i of a fixed filter.
func counterKey(name string, gen, i uint64) string {
	return fmt.Sprintf("%s:cnt:{%s:%d:%d}", name, name, gen, i)
}

// shardSegmentKey returns the key of segment i of shard j of stage s of a
// growing filter.
func shardSegmentKey(name string, gen, j uint64, s int, i uint64) string {
	return fmt.Sprintf("%s:seg:{%s:%d:%d}:%d:%d", name, name, gen, j, s, i)
}

// shardCounterKey returns the counter of shard j of stage s of a growing
// filter.
func shardCounterKey(name string, gen, j uint64, s int) string {
	return fmt.Sprintf("%s:cnt:{%s:%d:%d}:%d", name, name, gen, j, s)
}

// stageGeometry returns stage i of a growing filter of first capacity n0
// and compound rate p: capacity n0·growth^i, rate p(1-r)r^i, blocks rounded
// up to a multiple of shards.
func stageGeometry(n0 uint64, p, growth, tight float64, shards uint64, i int) (stage, error) {
	c := math.Floor(float64(n0) * math.Pow(growth, float64(i)))
	if !(c >= 1 && c < 1<<62) {
		return stage{}, fmt.Errorf("%w: stage %d would hold %v keys", ErrTooLarge, i, c)
	}
	rate := p * (1 - tight) * math.Pow(tight, float64(i))
	m, k, err := blocked.Params(uint64(c), rate)
	if err != nil {
		return stage{}, err
	}
	unit := shards * blocked.BlockBits
	if m > mmapstore.MaxCells-unit {
		return stage{}, fmt.Errorf("%w: stage %d of %d bits", ErrTooLarge, i, m)
	}
	m = (m + unit - 1) / unit * unit
	return stage{m: m, k: k, capacity: uint64(c), targetP: rate}, nil
}

// geometry returns the header of a new filter for n items at rate p.
func geometry(n uint64, p float64, c config) (header, error) {
	h := header{layout: LayoutVersion, scheme: hashing.Default, seed: c.seed, targetP: p, segBytes: c.segBytes}
	if !c.growing {
		m, k, err := blocked.Params(n, p)
		if err != nil {
			return header{}, err
		}
		h.stages = []stage{{m: m, k: k, capacity: n, targetP: p}}
		return h, nil
	}
	h.shards, h.growth, h.tight, h.maxStages, h.maxBytes = Shards, DefaultGrowth, DefaultTightening, c.maxStages, c.maxBytes
	s0, err := stageGeometry(n, p, h.growth, h.tight, h.shards, 0)
	if err != nil {
		return header{}, err
	}
	h.stages = []stage{s0}
	if h.maxBytes > 0 && s0.m/8 > h.maxBytes {
		return header{}, fmt.Errorf("%w: the first stage takes %d bytes, WithMaxBytes allows %d", ErrTooLarge, s0.m/8, h.maxBytes)
	}
	return h, nil
}

// explicitGeometry returns the header of a new filter of m bits (rounded up
// to whole blocks) and k probes, with the capacity and rate that
// partitioned gives the same geometry.
func explicitGeometry(m uint64, k uint32, c config) (header, error) {
	if m == 0 || k == 0 || k > mmapstore.MaxK {
		return header{}, fmt.Errorf("%w: m = %d, k = %d", ErrInvalid, m, k)
	}
	if c.growing {
		return header{}, fmt.Errorf("%w: CreateGeometry makes fixed filters; use Create with WithGrowth", ErrInvalid)
	}
	if m > mmapstore.MaxCells-blocked.BlockBits {
		return header{}, fmt.Errorf("%w: m = %d bits", ErrTooLarge, m)
	}
	m = (m + blocked.BlockBits - 1) / blocked.BlockBits * blocked.BlockBits
	n := uint64(math.Max(1, math.Floor(float64(m)*math.Ln2/float64(k))))
	p := blocked.FPR(m, n, k)
	p = math.Min(math.Max(p, math.SmallestNonzeroFloat64), math.Nextafter(1, 0))
	return header{layout: LayoutVersion, scheme: hashing.Default, seed: c.seed, targetP: p, segBytes: c.segBytes,
		stages: []stage{{m: m, k: k, capacity: n, targetP: p}}}, nil
}

// sameFilter reports how want and got differ in what defines the filter, or
// nil when they do not. The hashing scheme is not compared: an existing
// filter keeps the scheme it was made with.
func sameFilter(name string, want, got header) error {
	var diffs []string
	w, g := want.first(), got.first()
	if want.growing() != got.growing() {
		diffs = append(diffs, fmt.Sprintf("growing %v in redis, want %v", got.growing(), want.growing()))
	} else if want.growing() {
		if w.capacity != g.capacity || want.targetP != got.targetP {
			diffs = append(diffs, fmt.Sprintf("first capacity %d at rate %v in redis, want %d at %v", g.capacity, got.targetP, w.capacity, want.targetP))
		}
	} else if w.m != g.m || w.k != g.k {
		diffs = append(diffs, fmt.Sprintf("geometry m = %d, k = %d in redis, want m = %d, k = %d", g.m, g.k, w.m, w.k))
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

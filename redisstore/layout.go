package redisstore

import (
	"fmt"
	"math"
	"strings"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
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

	blockBytes = partitioned.BlockBits / 8

	// maxNameLen bounds a filter's name, to keep keys short.
	maxNameLen = 512

	// MaxSegments bounds the number of segments of a filter (a client keeps
	// their key names in memory): 2^20, 1 TiB at the default segment size.
	MaxSegments = 1 << 20

	// Shards is the number of shards of every stage of a growing filter:
	// the hash tags its keys spread over in a Redis Cluster.
	Shards = 16

	// DefaultGrowth and DefaultTightening are the stage ratios of a growing
	// filter, the scalable package's: stage i holds n·2^i keys at rate
	// p·(1-r)·r^i with r = 0.85, so the compound rate stays below p.
	DefaultGrowth     = scalable.DefaultGrowth
	DefaultTightening = scalable.DefaultTightening

	// DefaultMaxStages is the default and largest stage limit of a growing
	// filter: the scalable package's, 70. (It was 64 before the two were
	// one; a client of that time refuses to attach to a filter made with a
	// limit above 64, so a fleet that mixes versions sets WithMaxStages(64).
	// At growth 2 a filter reaches 2^62 keys, the most a stage may hold,
	// before its 63rd stage, so the two limits allow the same filters.)
	DefaultMaxStages = scalable.DefaultMaxStages
)

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
// and compound rate p: scalable.StageParams (capacity ⌈n0·growth^i⌉, rate
// p(1-r)r^i, sized as a blocked filter), with its blocks rounded up to a
// multiple of shards. It sizes a stage being added; the stages a filter
// has are read from its header.
func stageGeometry(n0 uint64, p, growth, tight float64, shards uint64, i int) (stage, error) {
	g, err := scalable.StageParams(n0, p, growth, tight, i)
	if err != nil {
		return stage{}, err
	}
	unit := shards * partitioned.BlockBits
	if g.Bits > mmapstore.MaxCells-unit {
		return stage{}, fmt.Errorf("%w: stage %d of %d bits", ErrTooLarge, i, g.Bits)
	}
	m := (g.Bits + unit - 1) / unit * unit
	return stage{m: m, k: g.K, capacity: g.Capacity, targetP: g.TargetFPR}, nil
}

// geometry returns the header of a new filter for n items at rate p.
func geometry(n uint64, p float64, c config) (header, error) {
	h := header{layout: LayoutVersion, scheme: bloomkit.DefaultScheme, seed: c.seed, targetP: p, segBytes: c.segBytes}
	if c.growth == 0 {
		m, k, err := partitioned.Params(n, p)
		if err != nil {
			return header{}, err
		}
		h.stages = []stage{{m: m, k: k, capacity: n, targetP: p}}
		return h, nil
	}
	h.shards, h.growth, h.tight, h.maxStages, h.maxBytes = Shards, c.growth, c.tight, c.maxStages, c.maxBytes
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
	if c.growth != 0 {
		return header{}, fmt.Errorf("%w: CreateWithSize makes fixed filters; use Create with WithGrowth", ErrInvalid)
	}
	if m > mmapstore.MaxCells-partitioned.BlockBits {
		return header{}, fmt.Errorf("%w: m = %d bits", ErrTooLarge, m)
	}
	m = (m + partitioned.BlockBits - 1) / partitioned.BlockBits * partitioned.BlockBits
	n := uint64(math.Max(1, math.Floor(float64(m)*math.Ln2/float64(k))))
	p := partitioned.FPR(m, n, k)
	p = math.Min(math.Max(p, math.SmallestNonzeroFloat64), math.Nextafter(1, 0))
	return header{layout: LayoutVersion, scheme: bloomkit.DefaultScheme, seed: c.seed, targetP: p, segBytes: c.segBytes,
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
		if want.growth != got.growth || want.tight != got.tight {
			diffs = append(diffs, fmt.Sprintf("growth %v, tightening %v in redis, want %v, %v", got.growth, got.tight, want.growth, want.tight))
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

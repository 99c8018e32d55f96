package fuse

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// The payload of a fuse file (docs/file-format.md, "fuse"), offsets in
// bytes from the payload's start, little-endian:
//
//	[0, 8)      shard bits s: 2^s shards, shard of a digest = H1 >> (64 - s)
//	[8, 16)     entry size, 32
//	[16, 32)    zero
//	[32, ...)   2^s entries of 32 bytes: fingerprint offset (uint64, bytes
//	            from the payload's start), shard seed (uint64), keys
//	            (uint64), segment count (uint32), log2 segment length (uint32)
//	[T, ...)    the shards' fingerprint arrays, in shard order, each
//	            (segCount+2) << segLenLog cells of CellBits bits, starting
//	            64-byte aligned; T = 32 + 32 * 2^s rounded up to 4096
//
// The payload ends at the last array rounded up to 64 bytes.
const (
	preambleSize = 32
	entrySize    = 32
	tableAlign   = 4096
	shardAlign   = 64
	maxShardBits = 32
)

func roundUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

func tableBytes(shardBits uint) uint64 {
	return roundUp(preambleSize+entrySize<<shardBits, tableAlign)
}

// shard is one shard as a lookup needs it.
type shard struct {
	seed        uint64
	segCountLen uint64 // segCount * segLen
	segLen      uint64
	mask        uint64
	// at is the shard's first cell, inside the filter's payload. The three
	// cells of any x are below (segCount+2) * segLen, the shard's length,
	// which decodeTable checked to lie inside the payload: lookups read
	// through it without bounds checks.
	at   unsafe.Pointer
	base uint64 // index of its first cell in the filter's cell array
	keys uint64
}

// plan is the layout of a filter before it is built: each shard's
// geometry and place.
type plan struct {
	bits      uint32 // fingerprint bits
	shardBits uint
	geoms     []geom
	keys      []uint64 // distinct keys per shard
	offsets   []uint64 // bytes from the payload's start
	cells     uint64
	length    uint64 // payload bytes
}

func newPlan(bits uint32, shardBits uint, keys []uint64) plan {
	pl := plan{bits: bits, shardBits: shardBits, keys: keys,
		geoms: make([]geom, len(keys)), offsets: make([]uint64, len(keys))}
	off := tableBytes(shardBits)
	for i, n := range keys {
		g := geomFor(n)
		pl.geoms[i], pl.offsets[i] = g, off
		pl.cells += g.cells()
		off = roundUp(off+g.cells()*uint64(bits/8), shardAlign)
	}
	pl.length = off
	return pl
}

func (pl *plan) total() (n uint64) {
	for _, k := range pl.keys {
		n += k
	}
	return n
}

// header is the file header of the planned filter.
func (pl *plan) header(c config, p float64) mmapstore.Header {
	n := pl.total()
	return mmapstore.Header{Variant: mmapstore.Fuse, Scheme: c.scheme, Seed: c.seed, M: pl.cells, K: 3,
		CellBits: pl.bits, Capacity: n, TargetFPR: p, Count: n, PayloadLen: pl.length}
}

// writePreamble writes the table's fixed part into payload.
func (pl *plan) writePreamble(payload []byte) {
	le := binary.LittleEndian
	le.PutUint64(payload[0:], uint64(pl.shardBits))
	le.PutUint64(payload[8:], entrySize)
}

// writeEntry records shard i, built with seed, in the table.
func (pl *plan) writeEntry(payload []byte, i int, seed uint64) {
	e := payload[preambleSize+i*entrySize:]
	le := binary.LittleEndian
	le.PutUint64(e[0:], pl.offsets[i])
	le.PutUint64(e[8:], seed)
	le.PutUint64(e[16:], pl.keys[i])
	le.PutUint32(e[24:], pl.geoms[i].segCount)
	le.PutUint32(e[28:], pl.geoms[i].segLenLog)
}

// fingerprints returns shard i's cells inside payload.
func fingerprints[T uint8 | uint16](payload []byte, pl *plan, i int) []T {
	var z T
	size := uint64(unsafe.Sizeof(z))
	b := payload[pl.offsets[i] : pl.offsets[i]+pl.geoms[i].cells()*size]
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(size))
}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func asBytes(words []uint64) []byte {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
}

// decodeTable reads and checks the shard table of a payload whose header is
// h: every shard's array inside the payload, in order, with a valid
// geometry, and their cells and keys adding up to the header's M and
// Count. O(shards), a few thousand at most (see MaxShardKeys). Errors wrap
// mmapstore.ErrCorrupt.
func decodeTable(h *mmapstore.Header, payload []byte) (shardBits uint, shards []shard, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: fuse: shard table: %s", mmapstore.ErrCorrupt, fmt.Sprintf(format, args...))
	}
	le := binary.LittleEndian
	size := uint64(len(payload))
	if size != h.PayloadLen || size < tableAlign {
		return 0, nil, bad("payload of %d bytes", size)
	}
	sb := le.Uint64(payload[0:])
	if sb > maxShardBits || le.Uint64(payload[8:]) != entrySize || le.Uint64(payload[16:]) != 0 || le.Uint64(payload[24:]) != 0 {
		return 0, nil, bad("preamble %x", payload[:preambleSize])
	}
	shardBits = uint(sb)
	off := tableBytes(shardBits)
	if off > size {
		return 0, nil, bad("%d shards need a %d-byte table, the payload is %d bytes", 1<<sb, off, size)
	}
	cb := uint64(h.CellBits / 8)
	shards = make([]shard, 1<<sb)
	var cells, keys uint64
	for i := range shards {
		e := payload[preambleSize+i*entrySize:]
		at, seed, n := le.Uint64(e[0:]), le.Uint64(e[8:]), le.Uint64(e[16:])
		g := geom{segCount: le.Uint32(e[24:]), segLenLog: le.Uint32(e[28:])}
		if g.segLenLog < 2 || g.segLenLog > maxSegLenLog || g.segCount == 0 {
			return 0, nil, bad("shard %d: segment length 2^%d, %d segments", i, g.segLenLog, g.segCount)
		}
		c := g.cells()
		if at != off || n > c || c*cb > size-at {
			return 0, nil, bad("shard %d: %d keys in %d cells at byte %d (want %d) of %d", i, n, c, at, off, size)
		}
		shards[i] = shard{seed: seed, base: at / cb, at: unsafe.Pointer(&payload[at]), segCountLen: uint64(g.segCount) << g.segLenLog,
			segLen: g.segLen(), mask: g.segLen() - 1, keys: n}
		cells += c
		keys += n
		off = roundUp(at+c*cb, shardAlign)
	}
	if off != size || cells != h.M || keys != h.Count {
		return 0, nil, bad("shards end at byte %d of %d, hold %d cells (header: %d) and %d keys (header: %d)",
			off, size, cells, h.M, keys, h.Count)
	}
	return shardBits, shards, nil
}

package join

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/bloomkit/bloomkit"
)

// lineTable is the exact side of common: every distinct line of one input
// (or of one group of partitions of it) with how many times it may still be
// printed. It is open addressing over two flat slices, so the garbage
// collector sees two objects however many lines it holds, and its size is
// known before it is filled (tableBytes).
//
// A line's entry lives in the arena: its hash, its count, the count being
// taken of the input read now (each a little-endian uint64), its length as
// a uvarint and its bytes. A slot holds the entry's offset+1 (low 40 bits)
// and 24 more bits of the hash, so a probe that meets another line rarely
// touches the arena: a lookup costs about two cache misses.
type lineTable struct {
	slots []uint64
	arena []byte
	n     uint64 // entries
	sink  uint64 // keeps the loads of warm
	shift uint   // 64 - log2(len(slots))
}

const (
	entHead  = 24 // hash, count, count in the input read now
	offBits  = 40 // an arena of up to 1 TiB
	offMask  = 1<<offBits - 1
	tagShift = offBits
)

// tableBytes is the memory a table holding up to n lines of b bytes in all
// takes, b counting each line's length prefix.
func tableBytes(n, b uint64) uint64 {
	return 8*slotsFor(n) + entHead*n + b
}

// slotsFor returns the slot count for n entries: a power of two, at most
// three quarters full.
func slotsFor(n uint64) uint64 {
	s := uint64(16)
	for s*3 < n*4 {
		s *= 2
	}
	return s
}

// reset empties t and sizes it for up to n lines of b bytes, reusing its
// memory when it is large enough.
func (t *lineTable) reset(n, b uint64) {
	s := slotsFor(n)
	if uint64(cap(t.slots)) >= s {
		t.slots = t.slots[:s]
		clear(t.slots)
	} else {
		t.slots = make([]uint64, s)
	}
	t.shift = uint(64 - bits.TrailingZeros64(s))
	if need := entHead*n + b; uint64(cap(t.arena)) < need {
		t.arena = make([]byte, 0, need)
	}
	t.arena = t.arena[:0]
	t.n = 0
}

// release drops the table's memory.
func (t *lineTable) release() { *t = lineTable{sink: t.sink} }

func (t *lineTable) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> t.shift }

// find returns the arena offset of line's entry and true, or the empty
// slot where it would go and false.
func (t *lineTable) find(h uint64, line []byte) (uint64, bool) {
	mask := uint64(len(t.slots) - 1)
	tag := h >> tagShift
	for i := t.home(h); ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return i, false
		}
		if s>>tagShift != tag {
			continue
		}
		off := s&offMask - 1
		e := t.arena[off:]
		if binary.LittleEndian.Uint64(e) != h {
			continue
		}
		n, w := binary.Uvarint(e[entHead:])
		if n == uint64(len(line)) && bytes.Equal(e[entHead+w:entHead+w+int(n)], line) {
			return off, true
		}
	}
}

func (t *lineTable) word(off uint64, field int) uint64 {
	return binary.LittleEndian.Uint64(t.arena[off+uint64(field)*8:])
}

func (t *lineTable) setWord(off uint64, field int, v uint64) {
	binary.LittleEndian.PutUint64(t.arena[off+uint64(field)*8:], v)
}

const (
	fieldCnt = 1
	fieldTmp = 2
)

// add counts one more copy of line: a new line gets count 1.
func (t *lineTable) add(h uint64, line []byte) {
	at, ok := t.find(h, line)
	if ok {
		t.setWord(at, fieldCnt, t.word(at, fieldCnt)+1)
		return
	}
	if (t.n+1)*4 > uint64(len(t.slots))*3 {
		t.grow()
		at, _ = t.find(h, line)
	}
	off := uint64(len(t.arena))
	t.arena = binary.LittleEndian.AppendUint64(t.arena, h)
	t.arena = binary.LittleEndian.AppendUint64(t.arena, 1)
	t.arena = binary.LittleEndian.AppendUint64(t.arena, 0)
	t.arena = binary.AppendUvarint(t.arena, uint64(len(line)))
	t.arena = append(t.arena, line...)
	t.slots[at] = (h>>tagShift)<<tagShift | (off + 1)
	t.n++
}

// each calls fn with the offset of every entry.
func (t *lineTable) each(fn func(off uint64)) {
	for off := uint64(0); off < uint64(len(t.arena)); {
		fn(off)
		n, w := binary.Uvarint(t.arena[off+entHead:])
		off += entHead + uint64(w) + n
	}
}

// grow doubles the slot array (only when the table was sized too small).
func (t *lineTable) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	t.shift--
	mask := uint64(len(t.slots) - 1)
	t.each(func(off uint64) {
		h := t.word(off, 0)
		i := t.home(h)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = (h>>tagShift)<<tagShift | (off + 1)
	})
}

// seen counts a copy of line in the input being counted (up to the count
// already allowed: more copies cannot raise the minimum).
func (t *lineTable) seen(h uint64, line []byte) {
	if at, ok := t.find(h, line); ok {
		if c := t.word(at, fieldTmp); c < t.word(at, fieldCnt) {
			t.setWord(at, fieldTmp, c+1)
		}
	}
}

// endInput closes the input being counted: every line's count becomes the
// minimum of its count so far and its count in that input.
func (t *lineTable) endInput() {
	t.each(func(off uint64) {
		t.setWord(off, fieldCnt, min(t.word(off, fieldCnt), t.word(off, fieldTmp)))
		t.setWord(off, fieldTmp, 0)
	})
}

// take reports whether one more copy of line may be printed, and counts it.
func (t *lineTable) take(h uint64, line []byte) bool {
	if at, ok := t.find(h, line); ok {
		if c := t.word(at, fieldCnt); c > 0 {
			t.setWord(at, fieldCnt, c-1)
			return true
		}
	}
	return false
}

// warm touches the slots, then the entries, that lookups of ds will read,
// in loops whose loads do not depend on each other, so the processor has
// many cache misses in flight instead of one per lookup. It returns a value
// only so that the loads are not optimised away.
func (t *lineTable) warm(ds []bloomkit.Digest) uint64 {
	var x uint64
	for _, d := range ds {
		x += t.slots[t.home(d.H1)]
	}
	for _, d := range ds {
		if s := t.slots[t.home(d.H1)]; s != 0 {
			x += uint64(t.arena[s&offMask-1])
		}
	}
	return x
}

// warmChunk is how many lookups warm prepares at a time: their slots and
// entries stay in the first-level caches until they are used.
const warmChunk = 32

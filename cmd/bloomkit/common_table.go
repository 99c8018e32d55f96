package main

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// lineTable is the exact side of common: every distinct line of one input
// (or of one group of partitions of it) with how many times it may still be
// printed. It is an open-addressing table over three flat slices, so the
// garbage collector sees three objects however many lines it holds, and its
// size in bytes is known before it is filled (tableBytes).
type lineTable struct {
	slots []uint32   // index+1 into ents; 0 is an empty slot; len is a power of two
	ents  []tableEnt // one per distinct line, in insertion order
	arena []byte     // the lines, each preceded by its length as a uvarint
	shift uint       // 64 - log2(len(slots))
}

type tableEnt struct {
	h   uint64 // the line's hash (Digest.H1)
	off uint64 // where the line's length prefix starts in arena
	cnt uint64 // copies still allowed: the minimum count over the inputs seen
	tmp uint64 // copies seen in the input being counted now
}

const tableEntBytes = 32 // unsafe.Sizeof(tableEnt{})

// tableBytes is the memory a table holding up to n lines of b bytes in all
// takes (b includes one length byte per line; longer prefixes are rare and
// covered by the slack of the slot array).
func tableBytes(n, b uint64) uint64 {
	return n*tableEntBytes + 4*slotsFor(n) + b
}

// slotsFor returns the slot count for n entries: a power of two, at most
// half full.
func slotsFor(n uint64) uint64 {
	s := uint64(16)
	for s < 2*n {
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
		t.slots = make([]uint32, s)
	}
	t.shift = uint(64 - bits.TrailingZeros64(s))
	if uint64(cap(t.ents)) < n {
		t.ents = make([]tableEnt, 0, n)
	}
	t.ents = t.ents[:0]
	if uint64(cap(t.arena)) < b {
		t.arena = make([]byte, 0, b)
	}
	t.arena = t.arena[:0]
}

// release drops the table's memory.
func (t *lineTable) release() { *t = lineTable{} }

func (t *lineTable) lineAt(off uint64) []byte {
	n, w := binary.Uvarint(t.arena[off:])
	return t.arena[off+uint64(w) : off+uint64(w)+n]
}

// slot returns the slot index where line (hash h) is or would go.
func (t *lineTable) slot(h uint64, line []byte) uint64 {
	mask := uint64(len(t.slots) - 1)
	i := (h * 0x9e3779b97f4a7c15) >> t.shift
	for {
		e := t.slots[i]
		if e == 0 {
			return i
		}
		ent := &t.ents[e-1]
		if ent.h == h && bytes.Equal(t.lineAt(ent.off), line) {
			return i
		}
		i = (i + 1) & mask
	}
}

// add counts one more copy of line: a new line gets count 1.
func (t *lineTable) add(h uint64, line []byte) {
	i := t.slot(h, line)
	if e := t.slots[i]; e != 0 {
		t.ents[e-1].cnt++
		return
	}
	if uint64(len(t.ents)+1)*2 > uint64(len(t.slots)) {
		t.grow()
		i = t.slot(h, line)
	}
	off := uint64(len(t.arena))
	t.arena = binary.AppendUvarint(t.arena, uint64(len(line)))
	t.arena = append(t.arena, line...)
	t.ents = append(t.ents, tableEnt{h: h, off: off, cnt: 1})
	t.slots[i] = uint32(len(t.ents))
}

// grow doubles the slot array (only when the table was sized too small).
func (t *lineTable) grow() {
	t.slots = make([]uint32, 2*len(t.slots))
	t.shift--
	mask := uint64(len(t.slots) - 1)
	for j := range t.ents {
		i := (t.ents[j].h * 0x9e3779b97f4a7c15) >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = uint32(j + 1)
	}
}

// find returns line's entry, or nil when the table does not hold it.
func (t *lineTable) find(h uint64, line []byte) *tableEnt {
	if e := t.slots[t.slot(h, line)]; e != 0 {
		return &t.ents[e-1]
	}
	return nil
}

// seen counts a copy of line in the input being counted (up to the count
// already allowed: more copies cannot raise the minimum).
func (t *lineTable) seen(h uint64, line []byte) {
	if e := t.find(h, line); e != nil && e.tmp < e.cnt {
		e.tmp++
	}
}

// endInput closes the input being counted: every line's count becomes the
// minimum of its count so far and its count in that input.
func (t *lineTable) endInput() {
	for i := range t.ents {
		t.ents[i].cnt = min(t.ents[i].cnt, t.ents[i].tmp)
		t.ents[i].tmp = 0
	}
}

// take reports whether one more copy of line may be printed, and counts it.
func (t *lineTable) take(h uint64, line []byte) bool {
	if e := t.find(h, line); e != nil && e.cnt > 0 {
		e.cnt--
		return true
	}
	return false
}

// size is the memory the table holds now.
func (t *lineTable) size() uint64 {
	return uint64(cap(t.slots))*4 + uint64(cap(t.ents))*tableEntBytes + uint64(cap(t.arena))
}

package join

import (
	"container/heap"
	"fmt"
	"io"
)

// mergeHeap orders partition readers by the survivor number of their
// current record.
type mergeHeap []*partReader

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*partReader)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge calls fn with every record of every partition in survivor order:
// the order of the last file. Every 4096 records it calls stop and ends
// with its error, if any.
func (ps *partSet) merge(bufLen int, progress io.Writer, stop func() error, fn func(line []byte, seq uint64) error) error {
	h := make(mergeHeap, 0, ps.parts())
	for p := range ps.parts() {
		if ps.recs[p] == 0 {
			continue
		}
		r := ps.reader(p, bufLen, progress)
		if err := r.next(); err != nil {
			return fmt.Errorf("temporary file %s: %w", r.name, noEOF(err))
		}
		h = append(h, r)
	}
	heap.Init(&h)
	n := 0
	for len(h) > 0 {
		r := h[0]
		if err := fn(r.line, r.seq); err != nil {
			return err
		}
		if n++; n%4096 == 0 {
			if err := stop(); err != nil {
				return err
			}
		}
		if err := r.next(); err == io.EOF {
			heap.Pop(&h)
		} else if err != nil {
			return fmt.Errorf("temporary file %s: %w", r.name, err)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return nil
}

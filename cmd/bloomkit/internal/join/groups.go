package join

import (
	"context"
	"io"
	"slices"

	"github.com/schollz/progressbar/v3"
)

// group is a run of consecutive partitions joined at once, with the input
// whose table of them is smallest (build) and its records and bytes there.
type group struct {
	from, to int
	build    *input
	n, b     uint64
}

// planGroups splits the p partitions into groups whose smallest table fits
// budget (a single partition is a group even when it does not).
func planGroups(counted []*input, p int, budget uint64) []group {
	var groups []group
	for from := 0; from < p; {
		g := group{from: from, to: from}
		for g.to < p {
			var best *input
			var bn, bb uint64
			for _, in := range counted {
				n, b := in.parts.sum(g.from, g.to+1)
				if best == nil || tableBytes(n, b) < tableBytes(bn, bb) {
					best, bn, bb = in, n, b
				}
			}
			if g.to > g.from && tableBytes(bn, bb) > budget {
				break
			}
			g.to++
			g.build, g.n, g.b = best, bn, bb
		}
		groups = append(groups, g)
		from = g.to
	}
	return groups
}

// joinGroups is pass 5, the exact join, one group of partitions at a time:
// the build input's partitions fill a table, the other counted inputs'
// lower each count to their own, and the last file's partitions mark, in
// the returned bitmap of survivor numbers, the occurrences that take a
// count. The counted inputs' partitions are deleted at the end.
func (g *grace) joinGroups() ([]uint64, error) {
	confirmed := make([]uint64, (g.survivors+63)/64)
	budget := g.tableBudget(confirmed)
	groups := planGroups(g.counted, g.p, budget)
	var maxN, maxB uint64
	for _, gr := range groups {
		maxN, maxB = max(maxN, gr.n), max(maxB, gr.b)
	}
	g.logf("join: %d groups; the largest table takes %d bytes of %d", len(groups), tableBytes(maxN, maxB), budget)
	var bar io.Writer
	if pb := g.progressBar(); pb != nil {
		defer pb.Finish()
		bar = pb
	}
	var t lineTable
	t.reset(maxN, maxB)
	for _, gr := range groups {
		if err := g.joinGroup(&t, gr, bar, confirmed); err != nil {
			return nil, err
		}
	}
	t.release()
	for _, in := range g.counted {
		in.parts.remove()
	}
	return confirmed, nil
}

// tableBudget is the memory left for a table beside the bitmap.
func (g *grace) tableBudget(confirmed []uint64) uint64 {
	w := g.work()
	return w - min(w/2, uint64(len(confirmed))*8)
}

// joinGroup joins the partitions of one group (see joinGroups).
func (g *grace) joinGroup(t *lineTable, gr group, bar io.Writer, confirmed []uint64) error {
	readParts := func(in *input, consume func(*lineBatch) error) error {
		return streamLines(g.ctx, func(add func([]byte, uint64) error) error {
			return in.parts.each(gr.from, gr.to, 256<<10, bar, add)
		}, nil, consume)
	}
	t.reset(gr.n, gr.b)
	if err := readParts(gr.build, t.adder()); err != nil {
		return err
	}
	for _, in := range g.counted {
		if in == gr.build {
			continue
		}
		if err := readParts(in, t.counter()); err != nil {
			return err
		}
		t.endInput()
	}
	return readParts(g.last, t.taker(func(b *lineBatch, i int) error {
		s := b.seqs[i]
		confirmed[s/64] |= 1 << (s % 64)
		return nil
	}))
}

// progressBar is a bar over the bytes of every partition (nil without
// cfg.Progress).
func (g *grace) progressBar() *progressbar.ProgressBar {
	if !g.cfg.Progress {
		return nil
	}
	var total uint64
	for _, in := range append(slices.Clone(g.counted), g.last) {
		_, n := in.parts.total()
		total += n
	}
	return progressbar.DefaultBytes(int64(total), "common: joining partitions")
}

// mergeBack is pass 6: the last file's survivors merged back into its
// order; the confirmed ones are printed.
func (g *grace) mergeBack(confirmed []uint64) error {
	var printed uint64
	bufLen := max(4<<10, min(256<<10, int(g.tableBudget(confirmed)/2)/g.p))
	err := g.last.parts.merge(bufLen, nil, func() error { return context.Cause(g.ctx) }, func(line []byte, seq uint64) error {
		if confirmed[seq/64]&(1<<(seq%64)) == 0 {
			return nil
		}
		printed++
		return g.print(line)
	})
	g.logf("printed %d lines", printed)
	return err
}

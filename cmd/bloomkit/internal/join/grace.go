package join

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/bloomkit/bloomkit/partitioned"
)

// grace is the partitioned join (docs/common.md): its passes are the
// methods below, run in order by job.grace.
type grace struct {
	*job
	files     *openFiles
	p         int      // partitions per input
	bufLen    int      // write buffer of one partition
	order     []*input // the counted inputs, in the order the filter chain reads them
	counted   []*input
	last      *input
	survivors uint64 // lines of the last input that passed the chain
}

func (j *job) grace(counted []*input, last *input) error {
	g, err := j.newGrace(counted, last)
	if err != nil {
		return err
	}
	chain, err := g.filterChain()
	if err != nil {
		return err
	}
	if err := g.partitionLast(chain); err != nil || g.survivors == 0 {
		return err
	}
	freeMemory()
	keep, err := g.survivorsFilter()
	if err != nil {
		return err
	}
	if err := g.partitionCounted(keep); err != nil {
		return err
	}
	freeMemory()
	confirmed, err := g.joinGroups()
	if err != nil {
		return err
	}
	return g.mergeBack(confirmed)
}

func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// newGrace sizes the join: the partitions, so that the table of the
// smallest input's share of one fits the budget (too many costs little, as
// small partitions are joined in groups; unknown sizes get 128), and the
// order of the filter chain.
func (j *job) newGrace(counted []*input, last *input) (*grace, error) {
	files, err := j.tempFiles()
	if err != nil {
		return nil, err
	}
	need := uint64(math.MaxUint64)
	for _, in := range counted {
		need = min(need, in.tableNeed())
	}
	p := 128
	if need != math.MaxUint64 {
		p = int(min(4096, max(1, (need+need/4)/j.work()+1)))
	}
	g := &grace{job: j, files: files, p: p, counted: counted, last: last,
		bufLen: int(min(256<<10, max(4<<10, (2<<20)/uint64(p))))}
	j.logf("grace: %d partitions under %s, budget %d bytes (table %d), at most %d files open",
		p, j.folder.path, j.cfg.Mem, j.work(), files.max)
	// The inputs that can be read again pass through filters first and are
	// partitioned last, reduced by the filter of the last file's survivors;
	// the others are partitioned as they are read. Smallest first: its
	// filter shrinks the next.
	g.order = slices.Clone(counted)
	slices.SortStableFunc(g.order, func(a, b *input) int {
		switch {
		case a.regular != b.regular:
			if a.regular {
				return -1
			}
			return 1
		case a.size < b.size:
			return -1
		case a.size > b.size:
			return 1
		}
		return 0
	})
	return g, nil
}

// partition returns a consumer of batches that writes their lines to ps.
func (g *grace) partition(ps *partSet) func(*lineBatch) error {
	return func(b *lineBatch) error {
		for i := range b.len() {
			if err := ps.write(partOf(b.ds[i], g.p), 0, b.line(i)); err != nil {
				return err
			}
		}
		return nil
	}
}

// closeParts flushes an input's partitions and counts what they took.
func (g *grace) closeParts(ps *partSet, err error) (recs, bytes uint64, _ error) {
	err = errors.Join(err, ps.close())
	recs, bytes = ps.total()
	g.tmpWritten += bytes
	return recs, bytes, err
}

// filterChain is pass 1: filter i holds the lines of input i that passed
// filter i-1, about the lines common to inputs 1..i; it returns the last.
// With one input before the last there is one filter, which takes the
// whole budget; a longer chain holds two at a time. An input that cannot
// be read again is partitioned as it is read (its lines that pass).
func (g *grace) filterChain() (*partitioned.Filter, error) {
	var prev *partitioned.Filter
	prevN := math.Inf(1)
	filterMem := g.work()
	if len(g.order) > 1 {
		filterMem /= 2
	}
	for i, in := range g.order {
		cur, err := newFilter(filterMem, math.Min(in.estLines(), prevN))
		if err != nil {
			return nil, err
		}
		if !in.regular {
			if in.parts, err = newPartSet(g.files, fmt.Sprintf("in%d", i), g.p, false, g.bufLen); err != nil {
				return nil, err
			}
		}
		var kept uint64
		var keep batchFilter
		if prev != nil {
			keep = prev.ContainsMany
		}
		err = g.read(in, "filtering "+in.name, keep, func(b *lineBatch) error {
			kept += uint64(b.len())
			cur.AddMany(b.keys())
			if in.parts != nil {
				return g.partition(in.parts)(b)
			}
			return nil
		})
		if in.parts != nil {
			_, _, err = g.closeParts(in.parts, err)
		}
		if err != nil {
			return nil, err
		}
		g.logf("pass over %s: %d lines, %d passed the filter (%d bits, k %d)", in.name, in.lines, kept, cur.Bits(), cur.K())
		prev, prevN = cur, float64(kept)
	}
	return prev, nil
}

// partitionLast is pass 2: the last file, read once through the chain; the
// lines that pass (its survivors) are partitioned with their number.
func (g *grace) partitionLast(chain *partitioned.Filter) error {
	ps, err := newPartSet(g.files, "last", g.p, true, g.bufLen)
	if err != nil {
		return err
	}
	g.last.parts = ps
	err = g.read(g.last, "partitioning "+g.last.name, chain.ContainsMany, func(b *lineBatch) error {
		for i := range b.len() {
			if err := ps.write(partOf(b.ds[i], g.p), g.survivors, b.line(i)); err != nil {
				return err
			}
			g.survivors++
		}
		return nil
	})
	_, n, err := g.closeParts(ps, err)
	if err == nil {
		g.logf("pass over %s: %d lines, %d survivors partitioned (%d bytes)", g.last.name, g.last.lines, g.survivors, n)
	}
	return err
}

// survivorsFilter is pass 3: the filter of the survivors, read back from
// their partitions in the whole budget, shrinks the inputs partitioned in
// pass 4 by the share of their lines absent from the last file. When most
// of the last file survived, most of their lines would pass too: it would
// cost more time than it saves I/O, and is not built (nil).
func (g *grace) survivorsFilter() (batchFilter, error) {
	if !slices.ContainsFunc(g.order, func(in *input) bool { return in.regular }) {
		return nil, nil
	}
	if g.survivors*10 > g.last.lines*7 {
		g.logf("most of %s survived: the other inputs are partitioned without a filter of it", g.last.name)
		return nil, nil
	}
	f, err := newFilter(g.work(), float64(g.survivors))
	if err != nil {
		return nil, err
	}
	if err := streamLines(g.ctx, func(add func([]byte, uint64) error) error {
		return g.last.parts.each(0, g.p, 256<<10, nil, add)
	}, nil, func(b *lineBatch) error {
		f.AddMany(b.keys())
		return nil
	}); err != nil {
		return nil, err
	}
	g.logf("filter of the survivors: %d bits, k %d", f.Bits(), f.K())
	return f.ContainsMany, nil
}

// partitionCounted is pass 4: the inputs that can be read again, reduced by
// the last file's survivors (keep, when not nil).
func (g *grace) partitionCounted(keep batchFilter) error {
	for i, in := range g.order {
		if !in.regular {
			continue
		}
		ps, err := newPartSet(g.files, fmt.Sprintf("in%d", i), g.p, false, g.bufLen)
		if err != nil {
			return err
		}
		in.parts = ps
		err = g.read(in, "partitioning "+in.name, keep, g.partition(ps))
		r, n, err := g.closeParts(ps, err)
		if err != nil {
			return err
		}
		g.logf("pass over %s: %d lines partitioned (%d bytes)", in.name, r, n)
	}
	return nil
}

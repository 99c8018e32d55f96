package join

import (
	"fmt"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/stretchr/testify/require"
)

func h(line string) uint64 { return bloomkit.Hash(bloomkit.DefaultScheme, []byte(line), lineSeed).H1 }

// TestLineTable: counts, the minimum over inputs, takes up to the count;
// sized too small it grows and keeps every entry.
func TestLineTable(t *testing.T) {
	var tab lineTable
	tab.reset(4, 64) // too small on purpose: it grows
	for i := range 1000 {
		for range i%3 + 1 {
			l := fmt.Sprintf("k%d", i)
			tab.add(h(l), []byte(l))
		}
	}
	// Another input has k(i) i%2+1 times: the minimum is min(i%3+1, i%2+1).
	for i := range 1000 {
		for range i%2 + 1 {
			l := fmt.Sprintf("k%d", i)
			tab.seen(h(l), []byte(l))
		}
	}
	tab.seen(h("absent"), []byte("absent"))
	tab.endInput()
	for i := range 1000 {
		l := fmt.Sprintf("k%d", i)
		want := min(i%3+1, i%2+1)
		for c := range want + 1 {
			require.Equal(t, c < want, tab.take(h(l), []byte(l)), "%s take %d", l, c)
		}
	}
	require.False(t, tab.take(h("absent"), []byte("absent")))
	require.EqualValues(t, 1000, tab.n)
}

// TestPlanGroups: groups cover every partition in order, and each group
// of more than one partition fits the budget.
func TestPlanGroups(t *testing.T) {
	mk := func(recs ...uint64) *input {
		ps := &partSet{recs: recs, bytes: make([]uint64, len(recs))}
		for i, r := range recs {
			ps.bytes[i] = r * 10
		}
		return &input{parts: ps}
	}
	a := mk(100, 100, 100, 5000, 100, 100)
	b := mk(50, 300, 300, 300, 10, 10)
	budget := tableBytes(400, 4000)
	groups := planGroups([]*input{a, b}, 6, budget)
	next := 0
	for _, g := range groups {
		require.Equal(t, next, g.from)
		require.Greater(t, g.to, g.from)
		if g.to-g.from > 1 {
			require.LessOrEqual(t, tableBytes(g.n, g.b), budget)
		}
		n, _ := g.build.parts.sum(g.from, g.to)
		require.Equal(t, g.n, n)
		next = g.to
	}
	require.Equal(t, 6, next)
	require.Greater(t, len(groups), 1)
}

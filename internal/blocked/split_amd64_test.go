package blocked

import "testing"

// TestSplitScalarPaths runs the split-block tests of the lookups again with
// the AVX2 path turned off, so the scalar ContainsKey, Contains and
// ContainsBatch are checked on machines that have AVX2 too.
func TestSplitScalarPaths(t *testing.T) {
	saved := useAVX2
	useAVX2 = false
	defer func() { useAVX2 = saved }()
	t.Run("AddContains", TestSplitAddContains)
	t.Run("Keyed", TestSplitKeyedMatchesDigestPath)
}

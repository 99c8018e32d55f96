package hugepage

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestWordsZeroedAndSized(t *testing.T) {
	for _, n := range []uint64{0, 1, 1000, Threshold/8 - 1, Threshold / 8, Threshold/8 + 12345} {
		w := Words(n)
		require.Len(t, w, int(n))
		for i := range w {
			if w[i] != 0 {
				t.Fatalf("n=%d: word %d is %#x, want 0", n, i, w[i])
			}
			w[i] = ^uint64(i)
		}
		for i := range w {
			if w[i] != ^uint64(i) {
				t.Fatalf("n=%d: word %d lost its value", n, i)
			}
		}
	}
}

// TestAdvisedRegion checks on Linux that the kernel recorded the advice:
// the mapping that holds a large array is marked "hg" in /proc/self/smaps.
// Where transparent huge pages are compiled out, there is nothing to check.
func TestAdvisedRegion(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("madvise advice is Linux only")
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("kernel without transparent huge pages")
	}
	w := Words(64 << 20 / 8)
	addr := uintptr(unsafe.Pointer(&w[len(w)/2]))
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	inside, found := false, false
	for s.Scan() {
		line := s.Text()
		var lo, hi uintptr
		if parseRange(line, &lo, &hi) {
			inside = lo <= addr && addr < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			require.Contains(t, strings.Fields(line), "hg", "mapping of the array: %s", line)
			found = true
		}
	}
	require.NoError(t, s.Err())
	require.True(t, found, "no mapping holds the array")
	runtime.KeepAlive(w)
}

// parseRange parses the "lo-hi" address range that starts a mapping's
// line in smaps and reports whether the line is one.
func parseRange(line string, lo, hi *uintptr) bool {
	first, _, _ := strings.Cut(line, " ")
	a, b, ok := strings.Cut(first, "-")
	if !ok {
		return false
	}
	x, err := strconv.ParseUint(a, 16, 64)
	if err != nil {
		return false
	}
	y, err := strconv.ParseUint(b, 16, 64)
	if err != nil {
		return false
	}
	*lo, *hi = uintptr(x), uintptr(y)
	return true
}

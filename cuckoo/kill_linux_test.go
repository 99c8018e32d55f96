package cuckoo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// crashEnv names the filter file a child process adds to before it kills
// itself (TestKillDuringAdds).
const crashEnv = "BLOOMKIT_CUCKOO_CRASH"

// TestKillDuringAdds: a process adds keys to a file-backed filter up to
// past its load (so that inserts move fingerprints), removes some, syncs
// after each batch and prints how many keys the last sync covered, and is
// killed (SIGKILL) mid-batch; every key synced is in the reopened filter,
// every synced remove stayed removed or is a false positive, and the
// filter takes adds again.
func TestKillDuringAdds(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "crash.bloom")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringAdds$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the child kills itself: %s", out)
	require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())
	var synced uint64
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.ParseUint(f, 10, 64); err == nil {
			synced = n
		}
	}
	require.Greater(t, synced, uint64(50_000))
	f, err := Open(path)
	require.NoError(t, err)
	var buf [16]byte
	for i := uint64(0); i < synced; i++ {
		k := filtertest.Key(buf[:], 1, i)
		if i%10 == 3 {
			continue // removed
		}
		require.True(t, f.Contains(k), "synced key %d lost", i)
	}
	fp := filtertest.CountFalsePositives(f, 2, 10_000)
	require.Less(t, fp, uint64(100), "a table, not noise")
	filtertest.AddKeys(f, 3, 1000)
	filtertest.NoFalseNegatives(t, f, 3, 1000)
	require.NoError(t, f.Close())
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.NoError(t, r.Close())
}

func crashChild(path string) {
	f, err := Create(path, 100_000, 0.001)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(3)
	}
	var buf [16]byte
	const batch, end = 5000, 20*5000 + 2500 // killed mid-batch, near capacity
	for i := uint64(0); i < end; i++ {
		f.Add(filtertest.Key(buf[:], 1, i))
		if i%10 == 3 {
			f.Remove(filtertest.Key(buf[:], 1, i))
		}
		if (i+1)%batch == 0 {
			if err := f.Sync(); err != nil {
				fmt.Println("sync:", err)
				os.Exit(3)
			}
			fmt.Println(i + 1)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

package serve

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAuthGuessesCountedAndLogBounded replays issue 42 row 8: 4
// connections guess passwords as fast as they can (52-98 k guesses a
// second before, unseen). Redis does not slow them either; now every
// refused AUTH is counted in INFO (rejected_auth, and Redis 7's
// acl_access_denied_auth) and logged at a bounded rate, each line naming
// the client and counting the refusals suppressed before it.
func TestAuthGuessesCountedAndLogBounded(t *testing.T) {
	p := startServed(t, t.TempDir(), map[string]any{"Password": "s3cret-enough"})
	begin := time.Now()
	var guesses atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := dialRaw(t, p.addr)
			for i := 0; time.Since(begin) < time.Second; i++ {
				rep := r.do("AUTH", "guess-"+string(rune('a'+i%26)))
				if !strings.HasPrefix(rep, "-WRONGPASS") {
					t.Errorf("a wrong password answered %q", rep)
					return
				}
				guesses.Add(1)
			}
			if rep := r.do("AUTH", "nobody", "x"); strings.HasPrefix(rep, "-WRONGPASS") {
				guesses.Add(1) // an unknown user is a refusal too
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	time.Sleep(2 * refusalEvery)
	r := dialRaw(t, p.addr)
	require.True(t, strings.HasPrefix(r.do("AUTH", "wrong"), "-WRONGPASS")) // logs the last suppressed ones
	total := int(guesses.Load()) + 1
	require.Equal(t, "+OK", r.do("AUTH", "s3cret-enough"))
	info := r.do("INFO", "stats")
	require.Contains(t, info, "rejected_auth:"+strconv.Itoa(total)+"\r\n")
	require.Contains(t, info, "acl_access_denied_auth:"+strconv.Itoa(total)+"\r\n")

	var lines, suppressed int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if lines, suppressed = refusalLines(p.logs.String(), `msg="authentication failed"`); lines+suppressed == total {
			break
		}
	}
	require.Equal(t, total, lines+suppressed, "every refusal is a line or counted in one")
	require.LessOrEqual(t, lines, int(elapsed/refusalEvery)+4, "%d guesses in %v gave %d log lines", total, elapsed, lines)
	require.Contains(t, p.logs.String(), "client=127.0.0.1:")
	t.Logf("%d guesses in %v: %d log lines", total, elapsed, lines)
}

// Package bench holds the benchmark scripts of bloomkit serve against
// RedisBloom (speed-vs-redisbloom.sh, growth-vs-redisbloom.sh; docs/serve.md, "Benchmarks against RedisBloom",) and their smoke
// test. The Go programs they run are in growth/ and firstanswer/.
package bench

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// redisBloom returns the RedisBloom module to compare with:
// $BLOOMKIT_REDISBLOOM, else the one TestCompareRedisBloom (package serve)
// builds and caches in the user cache folder.
func redisBloom(t *testing.T) string {
	so := os.Getenv("BLOOMKIT_REDISBLOOM")
	if cache, err := os.UserCacheDir(); so == "" && err == nil {
		so = filepath.Join(cache, "bloomkit", "redisbloom-v2.6.28.so")
	}
	if _, err := os.Stat(so); so == "" || err != nil {
		t.Skip("no RedisBloom module: set BLOOMKIT_REDISBLOOM, or run TestCompareRedisBloom once (it builds and caches one)")
	}
	return so
}

// freePorts returns a port p with p and p+1 free on the loopback.
func freePorts(t *testing.T) int {
	for range 100 {
		p := 20000 + rand.IntN(20000)
		a, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p
	}
	t.Fatal("no two free ports")
	return 0
}

// quickEnv is the environment less the scripts' size and case variables
// (so a stray N or CASES cannot change the smoke run); the server flags
// (BK_FLAGS, BK_EXTRA, RB_FLAGS ...) pass through.
func quickEnv() []string {
	sizes := regexp.MustCompile(`^(ALTS|SMALL|BIG|N_P16|N_C1|MADD_[A-Z]+|RESTART_[A-Z]+|SETTLE|CASES|N|FP_[A-Z]+|FN_[A-Z]+|CONNS|PIPELINE|MEXISTS_[A-Z]+|KEY|TARGET_RATE|SCALE_[A-Z]+|GEN_[A-Z]+|W)=`)
	var env []string
	for _, kv := range os.Environ() {
		if !sizes.MatchString(kv) {
			env = append(env, kv)
		}
	}
	return env
}

// tableRows returns the rows of the markdown table(s) a script printed
// (header and separator lines left out), each split into its cells.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| row ") || strings.HasPrefix(line, "| items ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestScriptsQuick runs both scripts in their QUICK mode against a freshly
// built bloomkit and RedisBloom, as a smoke run: they must finish, and every
// row of the targets' table must have both servers' figures and a verdict
// (pass or FAIL: the figures are not results). About a minute: behind
// BLOOMKIT_LONG=1 (.ci/run).
func TestScriptsQuick(t *testing.T) {
	if os.Getenv("BLOOMKIT_LONG") != "1" {
		t.Skip("a minute of benchmarks: set BLOOMKIT_LONG=1 (.ci/run does)")
	}
	for _, tool := range []string{"bash", "redis-server", "redis-cli", "redis-benchmark", "taskset", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	so := redisBloom(t)
	tmp := t.TempDir()
	bk := filepath.Join(tmp, "bloomkit")
	out, err := exec.Command("go", "build", "-o", bk, "github.com/bloomkit/bloomkit/cmd/bloomkit").CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, tc := range []struct {
		script string
		rows   []string // the first words of the target rows expected
	}{
		{"speed-vs-redisbloom.sh", []string{"BF.EXISTS hits -c 50 -P 16, 100000", "BF.EXISTS hits -c 50 -P 16, 1000000", "BF.EXISTS hits -c 1",
			"BF.MADD into reserved", "disk bytes written per added item", "restart to first answer", "replay rate"}},
		{"growth-vs-redisbloom.sh", []string{"bits/item at 100000 items", "false-positive rate on 100000", "false negatives", "BF.MEXISTS never-added",
			"largest bits/item of the filter (BF.INFO Size) at the points", "largest false-positive rate"}},
	} {
		if tc.script == "speed-vs-redisbloom.sh" && runtime.NumCPU() >= 2 {
			tc.rows = append(tc.rows, "scaling:") // skipped, with a line, on one CPU
		}
		t.Run(tc.script, func(t *testing.T) {
			cmd := exec.Command("bash", tc.script, bk, so, filepath.Join(tmp, tc.script))
			cmd.Env = append(quickEnv(), "QUICK=1", fmt.Sprintf("PORT=%d", freePorts(t)))
			b, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", b)
			rows := tableRows(string(b))
			for _, want := range tc.rows {
				found := false
				for _, r := range rows {
					if !strings.HasPrefix(r[0], want) {
						continue
					}
					found = true
					require.Len(t, r, 6, "row %q", r)
					require.NotEmpty(t, r[1], "bloomkit's figure in %q", r)
					require.NotEmpty(t, r[2], "RedisBloom's figure in %q", r)
					require.Contains(t, []string{"pass", "FAIL"}, r[5], "verdict of %q", r)
				}
				require.True(t, found, "no row %q in:\n%s", want, b)
			}
			if tc.script == "speed-vs-redisbloom.sh" {
				require.Contains(t, string(b), "# machine: ")
			}
		})
	}
}

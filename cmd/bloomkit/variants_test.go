package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBlockedVariants runs the partitioned and scalable variants through
// build, add, test, info, verify and union end to end.
func TestBlockedVariants(t *testing.T) {
	for _, v := range []string{"partitioned", "scalable"} {
		t.Run("variant="+v, func(t *testing.T) {
			dir := t.TempDir()
			// A partitioned filter is sized for every key it will get; a
			// scalable one starts small and grows.
			n := "10000"
			if v == "scalable" {
				n = "1000"
			}
			writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 5000))
			bk(t, dir, "", "build", "-variant", v, "-n", n, "-p", "0.001", "-o", "f.bloom", "keys.txt").ok(t)
			out := bk(t, dir, "", "info", "f.bloom").ok(t)
			require.Regexp(t, `variant +`+v, out)

			out = bk(t, dir, keyLines("more", 500), "add", "f.bloom").ok(t)
			m := regexp.MustCompile(`^500 keys read, (\d+) new\n$`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			fresh, _ := strconv.Atoi(m[1])
			require.GreaterOrEqual(t, fresh, 490)

			out = bk(t, dir, "", "test", "f.bloom", "k0", "k4999", "more499", "absent-key").ok(t)
			require.Equal(t, "k0\tpresent\nk4999\tpresent\nmore499\tpresent\nabsent-key\tabsent\n", out)
			// Every built key is found; few of 20000 others are.
			r := bk(t, dir, keyLines("k", 5000), "test", "-absent", "f.bloom")
			require.Equal(t, 1, r.code, "nothing selected, like grep")
			require.Empty(t, r.stdout, "no built key may be absent")
			r = bk(t, dir, keyLines("other", 20000), "test", "-present", "f.bloom")
			hits := len(regexp.MustCompile(`(?m)^other\d+$`).FindAllString(r.stdout, -1))
			require.Equal(t, strings.Count(r.stdout, "\n"), hits, "bare keys")
			require.Less(t, hits, 60, "false positives of 20000 lookups at p = 0.001: 20 expected")
			require.Contains(t, bk(t, dir, "", "verify", "f.bloom").ok(t), "ok")

			bk(t, dir, "", "build", "-variant", v, "-n", n, "-p", "0.001", "-o", "g.bloom", "keys.txt").ok(t)
			if v == "scalable" {
				bk(t, dir, "", "union", "-o", "u.bloom", "f.bloom", "g.bloom").fails(t, "cannot be merged")
				return
			}
			writeFile(t, filepath.Join(dir, "x.txt"), keyLines("x", 100))
			bk(t, dir, "", "add", "g.bloom", "-f", "x.txt").ok(t)
			bk(t, dir, "", "union", "-o", "u.bloom", "f.bloom", "g.bloom").ok(t)
			out = bk(t, dir, "", "test", "u.bloom", "more7", "x99").ok(t)
			require.Equal(t, "more7\tpresent\nx99\tpresent\n", out)
			_, err := os.Stat(filepath.Join(dir, "u.bloom"))
			require.NoError(t, err)
		})
	}
}

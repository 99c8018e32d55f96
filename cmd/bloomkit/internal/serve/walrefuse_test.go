package serve

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestDamagedLogRefusesKey (issue 42 row 1): a key whose write-ahead log
// is damaged, in its middle or in its header, is refused by every command
// (lookups included: the snapshot alone lacks the log's adds), from the
// start, with the log and, for a record, the offset; another key is
// served. The refusal lasts while the log is as it was found: a lookup
// finds it without reading the log again, and once the operator repairs
// the log (or moves it aside) the next command opens the key afresh.
func TestDamagedLogRefusesKey(t *testing.T) {
	for _, where := range []string{"record", "header"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			path := walDigestFixture(t, dir, mmapstore.Partitioned, 100_000, 20_000, 1000, 3)
			lp := logPath(path)
			f, err := os.OpenFile(lp, os.O_RDWR, 0)
			require.NoError(t, err)
			off := int64(20) // the log header's seed
			if where == "record" {
				off = mmapstore.LogHeaderSize + 10*(mmapstore.LogRecordHeaderSize+8000) + 500
			}
			_, err = f.WriteAt([]byte{1, 2, 3, 4}, off)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			before, err := os.ReadFile(lp)
			require.NoError(t, err)

			ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
			c := ts.client(t)
			ctx := context.Background()
			require.NoError(t, c.Do(ctx, "BF.ADD", "other", "x").Err())
			want := []string{"filter k refused", lp}
			if where == "record" {
				want = append(want, "damaged at offset 80224", "repair-log")
			} else {
				want = append(want, "cannot be read", "checksum")
			}
			for _, cmd := range [][]any{
				{"BF.EXISTS", "k", "a"}, {"BF.MEXISTS", "k", "a", "b"}, {"BF.ADD", "k", "a"},
				{"BF.MADD", "k", "a"}, {"BF.CARD", "k"}, {"BF.INFO", "k"}, {"BF.EXISTS", "k", "b"},
			} {
				err := c.Do(ctx, cmd...).Err()
				require.Error(t, err, "%v answered", cmd)
				for _, w := range want {
					require.Contains(t, err.Error(), w, "%v", cmd)
				}
			}
			ok, err := c.BFExists(ctx, "other", "x").Result()
			require.NoError(t, err)
			require.True(t, ok)
			require.Contains(t, ts.logs.String(), "write-ahead log damaged")
			after, err := os.ReadFile(lp)
			require.NoError(t, err)
			require.Equal(t, before, after, "the refused log is left as it was")

			if where == "record" {
				_, err := mmapstore.RepairLog(lp)
				require.NoError(t, err)
				require.NoError(t, c.Do(ctx, "BF.EXISTS", "k", "a").Err(), "served again after the repair")
				require.NoError(t, c.Do(ctx, "BF.ADD", "k", "a").Err())
				return
			}
			require.NoError(t, os.Rename(lp, filepath.Join(dir, "k.bloom.log.aside")))
			require.NoError(t, c.Do(ctx, "BF.EXISTS", "k", "a").Err(), "served from its snapshot once the log is moved aside")
		})
	}
}

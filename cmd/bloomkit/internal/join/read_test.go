package join

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadChanged: the second pass over a regular input fails with
// ErrChanged when the file was replaced, appended, truncated, or rewritten
// in place with the same size and time, and passes when it was not.
func TestReadChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"unchanged", func(*testing.T, string) {}},
		{"replaced", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p+".new", []byte("a\nb\nc\n"), 0o644))
			require.NoError(t, os.Rename(p+".new", p))
		}},
		{"appended", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			f.WriteString("d\n")
			require.NoError(t, f.Close())
		}},
		{"rewritten-same-size-and-time", func(t *testing.T, p string) {
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, []byte("a\nb\nd\n"), 0o644))
			require.NoError(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in")
			require.NoError(t, os.WriteFile(p, []byte("a\nb\nc\n"), 0o644))
			os.Chtimes(p, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
			in, err := statInput(p, nil)
			require.NoError(t, err)
			j := &job{ctx: context.Background(), cfg: Config{Lines: plainLines}}
			count := func(b *lineBatch) error { return nil }
			require.NoError(t, j.read(in, "first", nil, count))
			tc.change(t, p)
			err = j.read(in, "second", nil, count)
			if tc.name == "unchanged" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrChanged)
			require.ErrorContains(t, err, p)
		})
	}
}

// TestReadStream: an input that is not a regular file is read once, with
// no check (stdin here: the reader is told its name).
func TestReadStream(t *testing.T) {
	in, err := statInput("-", nil)
	require.NoError(t, err)
	require.False(t, in.regular)
	var lines int
	j := &job{ctx: context.Background(), cfg: Config{Lines: func(name, _ string, tap func(io.Reader) io.Reader, fn func([]byte) error) error {
		require.Equal(t, "-", name)
		return fn([]byte("x"))
	}}}
	require.NoError(t, j.read(in, "stdin", nil, func(b *lineBatch) error { lines += b.len(); return nil }))
	require.Equal(t, 1, lines)
}

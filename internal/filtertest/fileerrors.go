package filtertest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// RunFileErrors opens files this variant must refuse (a foreign file, a
// truncated filter, a filter of another variant, a missing file, a folder)
// with Open and OpenReadOnly and checks that every error has the one shape
// all variants share (issue 15): an *fs.PathError with Op "open" naming the
// file once, around the typed sentinel, which errors.Is finds; the message
// reads "<pkg>: open <path>: <sentinel>: <detail>", the sentinel once.
func RunFileErrors[F Stream[F]](t *testing.T, v Variant[F], pkg string) {
	dir := t.TempDir()

	good := filepath.Join(dir, "good.bloom")
	f, err := v.Create(good, 1000, 0.01, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	data, err := os.ReadFile(good)
	require.NoError(t, err)

	other := foreignHeader(v.Tag)

	cases := []struct {
		name     string
		write    func(path string) error
		sentinel error
	}{
		{"foreign", func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("just some text, not a filter\n", 300)), 0o644)
		}, mmapstore.ErrBadMagic},
		{"truncated", func(p string) error { return os.WriteFile(p, data[:len(data)-100], 0o644) }, mmapstore.ErrTruncated},
		{"wrong-variant", func(p string) error {
			mf, err := mmapstore.Create(p, other)
			if err != nil {
				return err
			}
			return mf.Close(0)
		}, mmapstore.ErrVariant},
		{"missing", func(string) error { return nil }, fs.ErrNotExist},
		{"folder", func(p string) error { return os.Mkdir(p, 0o755) }, mmapstore.ErrNotRegular},
	}
	for _, c := range cases {
		t.Run("file="+c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".bloom")
			require.NoError(t, c.write(path))
			for mode, open := range map[string]func(string) (F, error){"read-write": v.Open, "read-only": v.OpenReadOnly} {
				_, err := open(path)
				require.Error(t, err, mode)
				require.ErrorIs(t, err, c.sentinel, mode)
				var pe *fs.PathError
				require.True(t, errors.As(err, &pe), "%s: an *fs.PathError: %v", mode, err)
				require.Equal(t, "open", pe.Op, mode)
				require.Equal(t, path, pe.Path, mode)
				msg := err.Error()
				require.Equal(t, 1, strings.Count(msg, path), "%s: the path once: %s", mode, msg)
				require.True(t, strings.HasPrefix(msg, pkg+": open "+path+": "), "%s: the one shape: %s", mode, msg)
				if c.sentinel != fs.ErrNotExist {
					require.Equal(t, 1, strings.Count(msg, c.sentinel.Error()), "%s: the sentinel once: %s", mode, msg)
				}
				t.Logf("%s: %s", mode, msg)
			}
		})
	}
}

// foreignHeader is the header of a valid file of a variant other than tag
// (counting; standard for counting), whose layout is registered as its
// package registers it: a variant's tests link no other variant.
func foreignHeader(tag mmapstore.Variant) mmapstore.Header {
	h := mmapstore.Header{Variant: mmapstore.Counting, M: 1000, K: 3, CellBits: 4, Capacity: 100,
		TargetFPR: 0.01, PayloadLen: mmapstore.CellBytes(1000, 4)}
	mmapstore.RegisterVariant(mmapstore.Counting, "counting", mmapstore.CellArray(4))
	if tag == mmapstore.Counting {
		h.Variant, h.CellBits, h.PayloadLen = mmapstore.Standard, 1, mmapstore.CellBytes(1000, 1)
		mmapstore.RegisterVariant(mmapstore.Standard, "standard", mmapstore.CellArray(1))
	}
	return h
}

package filtertest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"
)

// LayoutHash is the xxh3 hash of words in little-endian byte order: a golden
// value that pins the bits fixed keys set, without any file, so a change to
// hashing or probing fails even if the format is untouched.
func LayoutHash(words []uint64) uint64 {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return xxh3.Hash(b)
}

// GoldenFileIsStream checks that write, which writes the golden filter to a
// file, reproduces the checked-in golden file at path byte for byte.
func GoldenFileIsStream(t *testing.T, path string, write func(path string) error) {
	t.Helper()
	want, err := os.ReadFile(filepath.Clean(path))
	require.NoError(t, err)
	got := filepath.Join(t.TempDir(), "g.bloom")
	require.NoError(t, write(got))
	have, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, want, have, "WriteFile output changed: a format change needs a new version")
}

package mmapstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// PublishCopy puts a sealed filter file at dst by rename, and refuses
// anything else with its typed error, leaving dst and the folder as they
// were.
func TestPublishCopy(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "served.bloom")
	publishBuild(t, dst, 1)
	src := filepath.Join(t.TempDir(), "build.bloom")
	publishBuild(t, src, 2)

	reader, err := OpenReadOnly(dst, Standard)
	require.NoError(t, err)
	require.NoError(t, PublishCopy(src, dst))
	require.EqualValues(t, 1, reader.Words()[0], "a reader of the old file keeps its mapping")
	require.NoError(t, reader.Close(0))
	r, err := OpenReadOnly(dst, Standard)
	require.NoError(t, err)
	require.EqualValues(t, 2, r.Words()[0])
	require.NoError(t, r.Verify())
	require.NoError(t, r.Close(0))

	before, err := os.ReadFile(dst)
	require.NoError(t, err)
	open, err := Create(filepath.Join(t.TempDir(), "open.bloom"), testHeader()) // still being written
	require.NoError(t, err)
	defer open.Close(0)
	junk := filepath.Join(t.TempDir(), "junk")
	require.NoError(t, os.WriteFile(junk, make([]byte, 10000), 0o644))
	damaged := filepath.Join(t.TempDir(), "damaged.bloom")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	data[PayloadOffset+9] ^= 1
	require.NoError(t, os.WriteFile(damaged, data, 0o644))
	for src, want := range map[string]error{
		open.Path(): ErrChecksumStale,
		junk:        ErrBadMagic,
		damaged:     ErrPayloadChecksum,
		dir:         ErrNotRegular,
	} {
		require.ErrorIs(t, PublishCopy(src, dst), want, src)
		now, err := os.ReadFile(dst)
		require.NoError(t, err)
		require.Equal(t, before, now, "dst untouched")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "no temporary file left")
	}
}

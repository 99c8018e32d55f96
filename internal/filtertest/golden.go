package filtertest

import (
	"encoding/binary"
	"flag"
	"fmt"
	"github.com/bloomkit/bloomkit"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomkit/bloomkit/internal/hashing"
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

// Update rewrites the golden files of the variant under test instead of
// reading them (go test ./VARIANT -run Golden -update). Only for a deliberate
// change that comes with a new format version or hashing scheme.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata")

// GoldenCase is one checked-in golden file of a variant and the filter it
// was built from.
type GoldenCase[F any] struct {
	Name  string // the subtest: "scheme1", "scheme2"
	Path  string // under testdata
	Build func(t testing.TB) F
	// Write writes the golden file(s) at Path for -update, for a variant
	// that is not one stream (growing: a snapshot and its history); nil:
	// Build's WriteFile (bloomkit.FileWriter).
	Write func(t *testing.T, path string)

	// Check asserts what the file carries beyond its keys: geometry, seed,
	// capacity, count. It runs on the file opened read-only.
	Check func(t *testing.T, f F)

	// Present(i) for i < NPresent must test present; of Absent(i) for i <
	// NAbsent exactly FalsePositives do (fixed keys, a fixed count).
	Present        func(i int) string
	NPresent       int
	Absent         func(i int) string
	NAbsent        int
	FalsePositives int

	Size       int64  // the file's length in bytes
	LayoutHash uint64 // LayoutHash of Build's words (v.Words)
	// BitsSet, when not zero, is the number of set cells of Build's filter.
	BitsSet uint64
}

// Golden checks each checked-in golden file of variant v: the file opens,
// verifies and answers as the filter it was built from (Check, its keys and
// a fixed count of false positives); the bits fixed keys set are pinned
// without any file (LayoutHash), so a change to hashing or probing fails
// even if the format is untouched; and this build writes the file byte for
// byte (a variant that writes streams: bloomkit.FileWriter).
func Golden[F File[F]](t *testing.T, v Variant[F], cases ...GoldenCase[F]) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if *Update {
				if c.Write != nil {
					c.Write(t, c.Path)
				} else {
					require.NoError(t, any(c.Build(t)).(bloomkit.FileWriter).WriteFile(c.Path))
				}
			}
			t.Run("File", func(t *testing.T) { goldenFile(t, v, c) })
			t.Run("Layout", func(t *testing.T) {
				f := c.Build(t)
				require.Equal(t, c.LayoutHash, LayoutHash(v.Words(f)), "layout hash")
				if c.BitsSet != 0 {
					require.EqualValues(t, c.BitsSet, uint64(f.FillRatio()*float64(v.Cells(f))+0.5), "cells set")
				}
			})
			if fw, ok := any(c.Build(t)).(bloomkit.FileWriter); ok {
				t.Run("Stream", func(t *testing.T) { GoldenFileIsStream(t, c.Path, fw.WriteFile) })
			}
		})
	}
}

func goldenFile[F File[F]](t *testing.T, v Variant[F], c GoldenCase[F]) {
	f, err := v.OpenReadOnly(c.Path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	if c.Check != nil {
		c.Check(t, f)
	}
	for i := 0; i < c.NPresent; i++ {
		require.True(t, f.ContainsString(c.Present(i)), "present key %q", c.Present(i))
	}
	fp := 0
	for i := 0; i < c.NAbsent; i++ {
		if f.ContainsString(c.Absent(i)) {
			fp++
		}
	}
	require.Equal(t, c.FalsePositives, fp, "false positives among %d fixed absent keys", c.NAbsent)
	st, err := os.Stat(c.Path)
	require.NoError(t, err)
	require.EqualValues(t, c.Size, st.Size())
}

// keysGolden is a filter whose golden files KeysGolden checks.
type keysGolden[F any] interface {
	SchemedFile[F]
	Bits() uint64
	Capacity() uint64
	TargetFPR() float64
}

// KeysGolden is the golden case of a variant's filter of keys "key-0" to
// "key-999" at capacity 1000, p = 1%, seed 7 and scheme s (v.NewScheme):
// m bits and k probes, 999 keys new when added (one false positive), fp of
// "other-0" to "other-9999" present, size bytes of file, the layout hash
// and the count of set bits.
func KeysGolden[F keysGolden[F]](v Variant[F], name, path string, s hashing.Scheme,
	m uint64, k uint32, fp int, size int64, layout, set uint64) GoldenCase[F] {
	return GoldenCase[F]{
		Name: name, Path: path,
		Build: func(t testing.TB) F {
			f, err := v.NewScheme(1000, 0.01, 7, s)
			require.NoError(t, err)
			for i := 0; i < 1000; i++ {
				f.AddString(fmt.Sprintf("key-%d", i))
			}
			return f
		},
		Check: func(t *testing.T, f F) {
			require.Equal(t, s, f.Scheme())
			require.EqualValues(t, m, f.Bits())
			require.EqualValues(t, k, f.K())
			require.EqualValues(t, 7, f.Seed())
			require.EqualValues(t, 1000, f.Capacity())
			require.Equal(t, 0.01, f.TargetFPR())
			require.EqualValues(t, 999, f.Added(), "one key was a false positive when added")
		},
		Present:  func(i int) string { return fmt.Sprintf("key-%d", i) },
		NPresent: 1000,
		Absent:   func(i int) string { return fmt.Sprintf("other-%d", i) },
		NAbsent:  10000, FalsePositives: fp,
		Size: size, LayoutHash: layout, BitsSet: set,
	}
}

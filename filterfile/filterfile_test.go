package filterfile_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/cuckoo"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/fuse"
	"github.com/bloomkit/bloomkit/growing"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
	"github.com/bloomkit/bloomkit/window"
)

// opens is each variant's own OpenReadOnly, to compare with the registry's.
var opens = map[mmapstore.Variant]func(string) (bloomkit.Filter, error){
	mmapstore.Standard:    direct(standard.OpenReadOnly),
	mmapstore.Partitioned: direct(partitioned.OpenReadOnly),
	mmapstore.Counting:    direct(counting.OpenReadOnly),
	mmapstore.Scalable:    direct(scalable.OpenReadOnly),
	mmapstore.Fuse:        direct(fuse.OpenReadOnly),
	mmapstore.Growing:     direct(growing.OpenReadOnly),
	mmapstore.Window:      direct(func(path string) (*window.Filter, error) { return window.OpenReadOnly(path) }),
	mmapstore.Cuckoo:      direct(cuckoo.OpenReadOnly),
}

func direct[F bloomkit.Filter](open func(string) (F, error)) func(string) (bloomkit.Filter, error) {
	return func(path string) (bloomkit.Filter, error) { return open(path) }
}

// goldenFiles returns every variant's checked-in golden filter files.
func goldenFiles(t *testing.T) []string {
	var paths []string
	for _, pattern := range []string{"../*/testdata/*.bloom", "../*/testdata/*.fuse"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		paths = append(paths, m...)
	}
	require.NotEmpty(t, paths)
	return paths
}

// face is everything the face answers but the lookups and ReadOnly, for
// comparison.
func face(f bloomkit.Filter) []any {
	return []any{f.Scheme(), f.Seed(), f.Capacity(), f.Added(), f.ApproxCount(), f.FillRatio(),
		f.EstimatedFPR(), f.TargetFPR(), f.K(), f.Bits(), f.Bytes(), f.Path()}
}

// requireSameAnswers checks that got answers every key as want does, in
// the three forms, and every introspection method. The keys are
// key-0..key-2999 and golden-0..golden-2999: every golden file holds
// key-0..key-99 or (counting) golden-100..golden-199.
func requireSameAnswers(t *testing.T, want, got bloomkit.Filter) {
	t.Helper()
	require.Equal(t, reflect.TypeOf(want), reflect.TypeOf(got), "the variant's own *Filter")
	require.Equal(t, face(want), face(got))
	held := map[string]int{}
	for _, family := range []string{"key", "golden"} {
		for i := range 3000 {
			k := fmt.Sprintf("%s-%d", family, i)
			w := want.ContainsString(k)
			if w && (family == "key" && i < 100 || family == "golden" && i >= 100 && i < 200) {
				held[family]++
			}
			require.Equal(t, w, got.ContainsString(k), k)
			require.Equal(t, w, got.Contains([]byte(k)), k)
			require.Equal(t, w, got.ContainsDigest(got.HashString(k)), k)
			require.Equal(t, want.Hash([]byte(k)), got.Hash([]byte(k)), k)
		}
	}
	require.True(t, held["key"] == 100 || held["golden"] == 100, "the golden file's keys: %v", held)
}

// TestGoldenFilesOpen opens every variant's golden files through the
// registry, read-only in place and for adding on a copy, and checks each
// answers exactly as through its own package; every registered variant has
// a golden file among them.
func TestGoldenFilesOpen(t *testing.T) {
	seen := map[mmapstore.Variant]bool{}
	for _, path := range goldenFiles(t) {
		t.Run(strings.TrimPrefix(path, "../"), func(t *testing.T) {
			h, err := mmapstore.ReadHeader(path)
			require.NoError(t, err)
			seen[h.Variant] = true
			own, ok := opens[h.Variant]
			require.True(t, ok, "variant %s: add it to opens", h.Variant)

			want, err := own(path)
			require.NoError(t, err)
			defer want.Close()
			got, err := filterfile.OpenReadOnly(path)
			require.NoError(t, err)
			requireSameAnswers(t, want, got)
			require.True(t, got.ReadOnly())
			require.NoError(t, got.Verify())
			require.NoError(t, got.Close())
			requireClosed(t, got)

			// For adding, on a copy (the golden files never change).
			cp := copyGolden(t, path)
			w, err := filterfile.Open(cp)
			require.NoError(t, err)
			wantCp, err := own(cp)
			require.NoError(t, err)
			defer wantCp.Close()
			requireSameAnswers(t, wantCp, w)
			if a, ok := w.(bloomkit.Adder); ok {
				require.False(t, w.ReadOnly())
				a.AddString("added through the face")
				require.True(t, w.ContainsString("added through the face"))
				require.NoError(t, w.Sync())
			} else {
				require.Equal(t, mmapstore.Fuse, h.Variant, "only fuse takes no keys")
				require.True(t, w.ReadOnly())
			}
			require.NoError(t, w.Close())
			requireClosed(t, w)
		})
	}
	for _, tag := range filterfile.Variants() {
		require.True(t, seen[tag], "registered variant %s has no golden file", tag)
	}
	require.Len(t, filterfile.Variants(), len(opens), "every variant package registers")
}

// requireClosed checks the face's contract after Close: lookups report
// true (never a false negative), Sync, Verify and a second Close return
// errors.
func requireClosed(t *testing.T, f bloomkit.Filter) {
	t.Helper()
	require.True(t, f.ContainsString("never added"))
	require.Error(t, f.Sync())
	require.Error(t, f.Verify())
	require.Error(t, f.Close(), "a second Close")
}

// copyGolden copies the golden file at path (and a growing filter's
// history beside it) into a temporary folder.
func copyGolden(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", ".log"} {
		b, err := os.ReadFile(path + suffix)
		if suffix != "" && errors.Is(err, os.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst+suffix, b, 0o644))
	}
	return dst
}

// TestUnknownVariant opens a file of a variant whose package is not
// registered (a program that does not link it): a typed error naming the
// variant, as for either open.
func TestUnknownVariant(t *testing.T) {
	path := copyGolden(t, "../partitioned/testdata/golden-v1.bloom")
	restore := filterfile.Unregister(mmapstore.Partitioned)
	defer restore()
	for name, open := range map[string]func(string) (bloomkit.Filter, error){
		"Open": filterfile.Open, "OpenReadOnly": filterfile.OpenReadOnly} {
		f, err := open(path)
		require.ErrorIs(t, err, filterfile.ErrUnknownVariant, name)
		require.Nil(t, f, name)
		require.ErrorContains(t, err, "partitioned", name)
		require.ErrorContains(t, err, path, name)
	}
	restore()
	f, err := filterfile.OpenReadOnly(path)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestNotAFilter: files that are not filter files get mmapstore's typed
// errors and a nil filter.
func TestNotAFilter(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "keys.txt")
	require.NoError(t, os.WriteFile(text, []byte(strings.Repeat("key-1\n", 3000)), 0o644))
	f, err := filterfile.OpenReadOnly(text)
	require.ErrorIs(t, err, mmapstore.ErrBadMagic)
	require.Nil(t, f)
	_, err = filterfile.Open(filepath.Join(dir, "missing.bloom"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = filterfile.OpenReadOnly(dir)
	require.Error(t, err)
}

// TestRegisterTwicePanics: a second registration of a tag is a
// programming error.
func TestRegisterTwicePanics(t *testing.T) {
	require.PanicsWithValue(t, "filterfile: Register called twice for standard", func() {
		filterfile.Register(filterfile.Variant{Name: "standard", Tag: mmapstore.Standard, Layout: mmapstore.CellArray(1),
			Open: filterfile.Face(standard.Open), OpenReadOnly: filterfile.Face(standard.OpenReadOnly)})
	})
}

// TestLiveFollowsAnyVariant serves a path through mmapstore.Live over
// OpenReadOnly while builds of other variants are published over it: each
// is picked up and answers as its own package.
func TestLiveFollowsAnyVariant(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "served.bloom")
	publish := func(golden string) {
		cp := copyGolden(t, golden)
		if _, err := os.Stat(golden + ".log"); err == nil {
			require.NoError(t, os.Rename(cp+".log", path+".log"))
		}
		require.NoError(t, os.Rename(cp, path))
	}
	publish("../standard/testdata/golden-v1-scheme2.bloom")
	live, err := mmapstore.NewLive(path, filterfile.OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()
	r := live.NewReader()
	defer r.Close()
	for _, next := range []string{"../partitioned/testdata/golden-v1.bloom", "../fuse/testdata/golden-v1.fuse",
		"../counting/testdata/counting-v1-scheme2.bloom", "../growing/testdata/golden-v1.bloom"} {
		publish(next)
		swapped, err := live.Reload()
		require.NoError(t, err)
		require.True(t, swapped, next)
		f, err := r.Value()
		require.NoError(t, err)
		h, err := mmapstore.ReadHeader(next)
		require.NoError(t, err)
		want, err := opens[h.Variant](next)
		require.NoError(t, err)
		require.Equal(t, reflect.TypeOf(want), reflect.TypeOf(f), next)
		for i := range 1000 {
			k := fmt.Sprintf("key-%d", i)
			require.Equal(t, want.ContainsString(k), f.ContainsString(k), k)
		}
		require.NoError(t, want.Close())
	}
	var _ io.Closer = bloomkit.Filter(nil) // Live's T
}

// TestUnknownVariantTag opens a file whose checksummed header names a
// variant tag the format does not know (7): the typed error of a damaged
// header, naming the tag, from both opens.
func TestUnknownVariantTag(t *testing.T) {
	path := copyGolden(t, "../standard/testdata/golden-v1-scheme2.bloom")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	const slotSize = 4096
	for off := 0; off < 2*slotSize; off += slotSize {
		slot := b[off : off+slotSize]
		binary.LittleEndian.PutUint16(slot[10:], 99)
		binary.LittleEndian.PutUint64(slot[slotSize-8:], xxh3.Hash(slot[:slotSize-8]))
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
	for name, open := range map[string]func(string) (bloomkit.Filter, error){
		"Open": filterfile.Open, "OpenReadOnly": filterfile.OpenReadOnly} {
		f, err := open(path)
		require.ErrorIs(t, err, mmapstore.ErrCorrupt, name)
		require.ErrorContains(t, err, "unknown variant tag 99", name)
		require.Nil(t, f, name)
	}
}

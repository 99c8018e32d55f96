package filtertest

import (
	"bytes"
	"encoding"
	"encoding/gob"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Binary is what BinaryEncoding needs of a filter: the encoding interfaces
// beside WriteTo.
type Binary interface {
	Filter
	Added() uint64
	WriteTo(w io.Writer) (int64, error)
	Close() error
	encoding.BinaryMarshaler
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
}

// BinaryCase describes a variant to BinaryEncoding.
type BinaryCase[F Binary] struct {
	Tag        mmapstore.Variant            // the variant tag its files carry
	New        func() (F, error)            // an empty in-memory filter; the suite adds 20000 keys
	Create     func(path string) (F, error) // the same, backed by a new file
	ReadFrom   func(r io.Reader) (F, error) // the package's ReadFrom
	Words      func(f F) []uint64           // the bit or counter array (every stage)
	ErrInvalid error                        // the variant's ErrInvalid
}

// newZero returns a pointer to a zero filter, as encoding/gob makes one to
// decode into.
func newZero[F any]() F {
	return reflect.New(reflect.TypeFor[F]().Elem()).Interface().(F)
}

// BinaryEncoding checks MarshalBinary, AppendBinary and UnmarshalBinary:
// exactly the bytes of WriteTo, a round trip into a zero filter and through
// encoding/gob, and for bad bytes the errors ReadFrom returns for them (plus
// mmapstore.ErrCorrupt for bytes after the filter), with the receiver left
// as it was; a file-backed receiver is refused with ErrInvalid.
func BinaryEncoding[F Binary](t *testing.T, c BinaryCase[F]) {
	f, err := c.New()
	require.NoError(t, err)
	AddKeys(f, 1, 20000)
	var stream bytes.Buffer
	_, err = f.WriteTo(&stream)
	require.NoError(t, err)

	data, err := f.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, stream.Bytes(), data, "MarshalBinary writes what WriteTo writes")
	prefix := []byte("prefix")
	appended, err := f.AppendBinary(bytes.Clone(prefix))
	require.NoError(t, err)
	require.Equal(t, append(bytes.Clone(prefix), data...), appended)

	g := newZero[F]()
	require.NoError(t, g.UnmarshalBinary(data))
	require.Equal(t, c.Words(f), c.Words(g))
	require.Equal(t, f.Added(), g.Added())
	NoFalseNegatives(t, g, 1, 20000)
	again, err := g.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, data, again, "the decoded filter encodes to the same bytes")
	require.True(t, g.AddString("after decoding"), "a decoded filter takes new keys")
	require.True(t, g.ContainsString("after decoding"))

	t.Run("gob", func(t *testing.T) { binaryGob(t, c, f) })
	t.Run("bad bytes", func(t *testing.T) { binaryBadBytes(t, c, data, g) })
	t.Run("file-backed receiver", func(t *testing.T) { binaryFileBacked(t, c, data) })
}

// binaryGob: f goes through encoding/gob inside a struct and comes back
// with its words, count and keys.
func binaryGob[F Binary](t *testing.T, c BinaryCase[F], f F) {
	type envelope struct {
		Name   string
		Filter F
	}
	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(envelope{"whitelist", f}))
	var out envelope
	require.NoError(t, gob.NewDecoder(&buf).Decode(&out))
	require.Equal(t, "whitelist", out.Name)
	require.Equal(t, c.Words(f), c.Words(out.Filter))
	require.Equal(t, f.Added(), out.Filter.Added())
	NoFalseNegatives(t, out.Filter, 1, 20000)
}

// binaryBadBytes: each kind of bad bytes gets from UnmarshalBinary the
// error ReadFrom returns for it, and g, a filter holding keys 0..19999 of
// set 1, is left as it was. data is a good encoding.
func binaryBadBytes[F Binary](t *testing.T, c BinaryCase[F], data []byte, g F) {
	// A filter of another variant: a header of another tag.
	h := foreignHeader(c.Tag)
	var foreign bytes.Buffer
	_, err := mmapstore.WriteStream(&foreign, h, make([]uint64, h.PayloadLen/8))
	require.NoError(t, err)

	mutate := func(fn func([]byte)) []byte { b := bytes.Clone(data); fn(b); return b }
	for _, bad := range []struct {
		name string
		data []byte
		want error // from UnmarshalBinary, and from ReadFrom unless trailing
	}{
		{"empty", nil, mmapstore.ErrTruncated},
		{"not a filter", []byte("PK\x03\x04 this is a zip file, not a filter, and long enough"), mmapstore.ErrBadMagic},
		{"header cut", data[:5000], mmapstore.ErrTruncated},
		{"payload cut", data[:len(data)-8], mmapstore.ErrTruncated},
		{"version 2", mutate(func(b []byte) { b[8], b[mmapstore.SlotSize+8] = 2, 2 }), mmapstore.ErrVersion},
		{"header checksum", mutate(func(b []byte) { b[40] ^= 0x10; b[mmapstore.SlotSize+40] ^= 0x10 }), mmapstore.ErrHeaderChecksum},
		{"payload bit flip", mutate(func(b []byte) { b[mmapstore.PayloadOffset+100] ^= 0x10 }), mmapstore.ErrPayloadChecksum},
		{"another variant", foreign.Bytes(), mmapstore.ErrVariant},
		{"trailing bytes", append(bytes.Clone(data), 0), mmapstore.ErrCorrupt},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, readErr := c.ReadFrom(bytes.NewReader(bad.data))
			if bad.name == "trailing bytes" {
				require.NoError(t, readErr, "a stream stops at the end of its payload")
			} else {
				require.ErrorIs(t, readErr, bad.want)
			}
			// Into a zero filter, and into a filter that holds keys,
			// which must keep them.
			require.ErrorIs(t, newZero[F]().UnmarshalBinary(bad.data), bad.want)
			added := g.Added()
			err := g.UnmarshalBinary(bad.data)
			require.ErrorIs(t, err, bad.want)
			if readErr != nil {
				require.Equal(t, readErr.Error(), err.Error(), "the same error as ReadFrom")
			}
			require.Equal(t, added, g.Added(), "the receiver is unchanged")
			NoFalseNegatives(t, g, 1, 20000)
		})
	}
}

// binaryFileBacked: a file-backed filter encodes like WriteTo and refuses
// to be decoded into, with ErrInvalid naming its path.
func binaryFileBacked[F Binary](t *testing.T, c BinaryCase[F], data []byte) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	ff, err := c.Create(path)
	require.NoError(t, err)
	defer ff.Close()
	ff.AddString("mapped")
	fileData, err := ff.MarshalBinary()
	require.NoError(t, err)
	var fileStream bytes.Buffer
	_, err = ff.WriteTo(&fileStream)
	require.NoError(t, err)
	require.Equal(t, fileStream.Bytes(), fileData)

	err = ff.UnmarshalBinary(data)
	require.ErrorIs(t, err, c.ErrInvalid)
	require.ErrorContains(t, err, path)
	require.True(t, ff.ContainsString("mapped"), "unchanged")
	require.EqualValues(t, 1, ff.Added())
}

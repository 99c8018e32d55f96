package cuckoo

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func TestScheme(t *testing.T) { filtertest.SchemeSuite(t, variant, goldenWidePath) }

func TestBinaryEncoding(t *testing.T) {
	filtertest.BinaryEncoding(t, filtertest.BinaryCase[*Filter]{
		Tag:        mmapstore.Cuckoo,
		New:        func() (*Filter, error) { return New(20000, 0.01, WithSeed(0x5eed)) }, // not the default: a decoded filter must hash with it
		Create:     func(path string) (*Filter, error) { return Create(path, 20000, 0.01) },
		ReadFrom:   ReadFrom,
		Words:      func(f *Filter) []uint64 { return f.words },
		ErrInvalid: ErrInvalid,
	})
}

package scalable

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func TestBinaryEncoding(t *testing.T) {
	filtertest.BinaryEncoding(t, filtertest.BinaryCase[*Filter]{
		Tag:      mmapstore.Scalable,
		New:      func() (*Filter, error) { return New(5000, 0.01, WithSeed(0x5eed)) }, // grows to 3 stages; not the default seed
		Create:   func(path string) (*Filter, error) { return Create(path, 20000, 0.01) },
		ReadFrom: ReadFrom,
		Words: func(f *Filter) []uint64 {
			var words []uint64
			for _, s := range f.current() {
				words = append(words, s.words...)
			}
			return words
		},
		ErrInvalid: ErrInvalid,
	})
}

package standard

import (
	"fmt"

	"github.com/bloomkit/bloomkit/internal/classic"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// OpenPrivate maps the filter file at path copy-on-write
// (mmapstore.OpenPrivate): O(1) whatever its size, no writer lock taken,
// and adds change the memory only, never the file. It is for a writer whose
// durability is a log of digests beside a sealed snapshot (bloomkit serve):
// the log is replayed into the filter with AddDigest, and a checkpoint
// writes the whole filter (WriteTo) to a new file renamed over the
// snapshot. Sync does nothing and Close only unmaps.
func OpenPrivate(path string) (*Filter, error) {
	mf, err := mmapstore.OpenPrivate(path, mmapstore.Standard)
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	h := mf.Header()
	f := &Filter{geom: classic.Of(h)}
	f.added.Store(h.Count)
	f.attach(mf)
	return f, nil
}

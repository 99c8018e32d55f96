package mmapstore

import (
	"io/fs"
	"os"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// OpenLogReplay is OpenLog that also hands the digests of the log's valid
// records, in order, to fn, during the one read of the log that OpenLog
// makes anyway: for a restart that replays the log into its snapshot,
// which then reads the log once instead of twice. fn is called only when
// the log's hashing is scheme and seed (compare Info afterwards, as after
// OpenLog). When the log turns out damaged (a *LogDamageError,
// ErrLogCorrupt: an invalid record with intact ones after it, or more
// invalid bytes at its end than a torn write leaves) or fn returns an
// error, the log is not opened, and fn has seen the digests before the
// damage: the caller discards what it built from them. A torn last write
// is left out as OpenLog does (the first write cuts it), after fn has
// seen every record before it.
func OpenLogReplay(path string, scheme hashing.Scheme, seed uint64, fn func([]hashing.Digest) error) (*Log, error) {
	f, _, err := openRegular(path, os.O_RDWR)
	if err != nil {
		return nil, &fs.PathError{Op: "open log", Path: path, Err: err}
	}
	l, err := openLog(f, path, func(li LogInfo) func([]hashing.Digest) error {
		if li.Scheme != scheme || li.Seed != seed {
			return nil
		}
		return fn
	})
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open log", Path: path, Err: err}
	}
	return l, nil
}

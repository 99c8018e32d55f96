package mmapstore

import (
	"errors"
	"io/fs"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Commit appends ds and writes them to the file, and waits for the disk
// too when sync is set, as one step that either happens whole or not at
// all: when it returns an error, none of ds is in the log, neither in the
// file nor buffered, and Count is what it was. It is the write of a
// server that logs a command's adds before it applies them, so that a
// command refused for a full disk changes nothing. Digests buffered by
// earlier Appends are written first; if that fails, ds is not appended.
//
// Bytes of ds already written when a later write or the sync fails are
// cut off the file again. Should that cut fail too, the next write cuts
// them first (and fails if it cannot), so they are never followed by a
// record; only a crash before that write leaves them in the file, where
// a replay would read them. Every error it returns is ErrCommit
// (errors.Is), beside its cause.
func (l *Log) Commit(ds []hashing.Digest, sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return commitError{ErrClosed}
	}
	if err := l.flushLocked(); err != nil {
		return commitError{err}
	}
	end, count := l.end, l.count
	err := l.appendLocked(ds)
	if err == nil {
		err = l.flushLocked()
	}
	if err == nil && sync {
		if serr := l.f.Sync(); serr != nil {
			err = &fs.PathError{Op: "sync log", Path: l.path, Err: serr}
		}
	}
	if err == nil {
		return nil
	}
	l.buf, l.open, l.count = l.buf[:0], -1, count
	if l.end > end {
		l.end = end
		if terr := l.f.Truncate(end); terr != nil {
			l.cut = true
		}
	}
	return commitError{err}
}

// ErrCommit: Commit could not log the digests it was given; none of them
// is in the log.
var ErrCommit = errors.New("the digests could not be logged")

// commitError is an error of Commit: its cause's message, and both
// ErrCommit and the cause for errors.Is.
type commitError struct{ error }

func (e commitError) Unwrap() error        { return e.error }
func (e commitError) Is(target error) bool { return target == ErrCommit }

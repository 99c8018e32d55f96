package mmapstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// DefaultReplaceWait is how long a replace of an existing file waits, unless
// SetReplaceWait says otherwise, for the writer that holds the file open to
// close it.
const DefaultReplaceWait = 5 * time.Second

var replaceWait atomic.Int64 // nanoseconds; set by SetReplaceWait

func init() { replaceWait.Store(int64(DefaultReplaceWait)) }

// SetReplaceWait sets how long every replace of an existing filter file
// (Publish, PublishCopy, Replace, WriteFileAtomic) waits for a writer that
// holds the target open to close it, and returns the previous wait. A wait
// of 0 or less refuses at once. It is safe to call at any time; a replace
// already waiting keeps the wait it started with.
func SetReplaceWait(d time.Duration) time.Duration {
	return time.Duration(replaceWait.Swap(int64(max(d, 0))))
}

// Replace moves the finished filter file from over to (in the same folder)
// and syncs the folder: the last step of an atomic publish, for builders
// that make their file some other way than CreateTemp (a copy to merge into,
// say). from must already be closed and synced.
//
// When to is a file that a writer holds open (Open or Create, in this or
// another process), Replace waits for the writer to close it (see
// SetReplaceWait) and then refuses with an *fs.PathError (Op "replace",
// the path to) around ErrLocked, leaving both files as they were: a rename
// over a file that is being written would send the writer's adds to a file
// that no longer has a name. Publish, PublishCopy and WriteFileAtomic end
// with the same step. A writer that follows replaces (see Follower) is not
// waited for: the rename goes ahead at once, and the writer carries its
// writes over to the new file.
func Replace(from, to string) error { return renameDurably(from, to) }

// renameDurably moves from over to, holding the writer lock of the file at
// to while it does, and syncs the folder that holds both.
func renameDurably(from, to string) error {
	if err := publishTarget(to); err != nil {
		return err
	}
	unlock, err := lockTarget(to)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("mmapstore: publish: %w", err)
	}
	dir, err := os.Open(filepath.Dir(to))
	if err != nil {
		return fmt.Errorf("mmapstore: publish: open folder: %w", err)
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return fmt.Errorf("mmapstore: publish: sync folder: %w", err)
	}
	return nil
}

// lockTarget takes the writer lock of the regular file at path, waiting up
// to the replace wait for a writer that holds it, and returns the function
// that releases it. A writer that follows replaces is not waited for: the
// function returned then releases the replace's mark (see followedReplace). Nothing to lock (no file, not a regular file, a file
// this process may not read, a file system without flock) is no error: no
// writer can hold such a file, and the rename reports what it reports.
func lockTarget(path string) (unlock func(), err error) {
	wait := time.Duration(replaceWait.Load())
	deadline := time.Now().Add(wait)
	for try := 0; ; try++ {
		f, st, err := openRegular(path, os.O_RDONLY)
		if err != nil {
			return func() {}, nil
		}
		err = lockExclusive(f)
		if err == nil {
			if now, serr := os.Stat(path); serr == nil && !os.SameFile(now, st) && try < 100 {
				f.Close() // replaced while we locked: lock what is there now
				continue
			}
			return func() { f.Close() }, nil
		}
		if errors.Is(err, ErrLocked) && followedReplace(f, st, path) {
			// Its writer follows replaces (a server with a journal):
			// rename now; f's mark holds the writer's Stop until then.
			return func() { f.Close() }, nil
		}
		f.Close()
		if !errors.Is(err, ErrLocked) {
			return func() {}, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, &fs.PathError{Op: "replace", Path: path,
				Err: fmt.Errorf("%w: a writer still held it after %v; nothing was replaced", ErrLocked, wait)}
		}
		time.Sleep(min(left, 20*time.Millisecond))
	}
}

// stillAtPath returns nil while the path of a file open for writing still
// names it, and else an *fs.PathError (Op op) around ErrReplaced: the file
// was renamed over or removed, so what was written to it is not at the path.
// Errors other than a missing path (a folder this process can no longer
// search, say) are not evidence of a replace and return nil.
func (f *File) stillAtPath(op string) error {
	now, err := os.Stat(f.path)
	switch {
	case err == nil && os.SameFile(now, f.id):
		return nil
	case err == nil:
		err = fmt.Errorf("%w: another file was moved to the path while this one was open for writing; what was written went to the file it replaced", ErrReplaced)
	case errors.Is(err, fs.ErrNotExist):
		err = fmt.Errorf("%w: the file was removed from the path while open for writing; what was written is not at the path", ErrReplaced)
	default:
		return nil
	}
	return &fs.PathError{Op: op, Path: f.path, Err: err}
}

// publishTarget refuses a publish to a path that names something other than
// a regular file: a device, a pipe, a socket or a folder, and a symbolic
// link (such as /dev/stdout), since a rename replaces the link itself, not
// the file it names. A missing path, or one this process cannot stat, is
// left to the rename to report.
func publishTarget(path string) error {
	st, err := os.Lstat(path)
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	what := notRegular(st)
	if st.Mode()&fs.ModeSymlink != 0 {
		what = fmt.Errorf("%w: it is a symbolic link, and a rename would replace the link itself, not what it names", ErrNotRegular)
	}
	return &fs.PathError{Op: "publish", Path: path, Err: fmt.Errorf("%w; a filter is published by renaming a complete file over a regular file or a missing path: give a regular file's path (nothing was written)", what)}
}

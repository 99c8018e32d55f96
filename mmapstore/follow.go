package mmapstore

import (
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Follower marks a file open for writing whose writer follows replaces of
// it: a writer that watches its path and, when another file is moved
// there, opens that file and adds again what it wrote since (as `bloomkit
// serve` does with its journal). While a Follower holds a file, a replace
// of that file by this package (Publish, PublishCopy, Replace,
// WriteFileAtomic, in any process) does not wait for the writer's lock: it
// renames at once, so that a nightly build lands over a file a server
// writes to. The writer then owns the handover: it must look at its path
// after each replace could have landed, and carry its writes over.
//
// The mark is a lock the kernel drops with the process (an open file
// description lock on Linux, on a byte far past the end of the file), so a
// follower killed by SIGKILL leaves nothing behind, and replaces wait for
// the writer's lock again, as they do for any writer. Elsewhere than Linux
// Follow succeeds but marks nothing: replaces wait and refuse as for any
// writer (see SetReplaceWait).
type Follower struct {
	f    *os.File
	info os.FileInfo
}

// Follow marks the file now at path as followed by its writer (the caller,
// which holds it open for writing). Info tells which file was marked: the
// caller compares it with the file it writes to, since the path may have
// been replaced between its open and Follow.
func Follow(path string) (*Follower, error) {
	f, st, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, &fs.PathError{Op: "follow", Path: path, Err: err}
	}
	if err := markFollowed(f); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "follow", Path: path, Err: err}
	}
	return &Follower{f: f, info: st}, nil
}

// Info describes the file the Follower marks (os.SameFile compares it).
func (fl *Follower) Info() os.FileInfo { return fl.info }

// followStopWait bounds Stop's wait for the replaces in progress: each
// holds its mark only for a rename and a folder sync.
const followStopWait = 10 * time.Second

// Stop removes the mark and then waits until no replace that saw it is
// still renaming: once Stop returns, every replace that relied on the
// writer following it has landed, and later replaces wait for the
// writer's lock. A writer that stops following (to close the file, say)
// looks at its path after Stop, so that no replace goes unseen. Stop
// waits at most 10 s and then returns an error; the Follower is released
// either way. Stop after Stop or Close does nothing.
func (fl *Follower) Stop() error {
	if fl == nil || fl.f == nil {
		return nil
	}
	f := fl.f
	fl.f = nil
	defer f.Close()
	if err := unmarkFollowed(f); err != nil {
		return &fs.PathError{Op: "follow", Path: f.Name(), Err: err}
	}
	deadline := time.Now().Add(followStopWait)
	for {
		busy, err := replacing(f)
		if err != nil || !busy {
			return err
		}
		if time.Now().After(deadline) {
			return &fs.PathError{Op: "follow", Path: f.Name(),
				Err: fmt.Errorf("a replace still held its mark after %v", followStopWait)}
		}
		time.Sleep(time.Millisecond)
	}
}

// Close removes the mark at once, without waiting for replaces in
// progress (see Stop).
func (fl *Follower) Close() error {
	if fl == nil || fl.f == nil {
		return nil
	}
	err := fl.f.Close()
	fl.f = nil
	return err
}

// followedReplace is the replace's side, on the file f (st) it opened at
// path and found locked by a writer: it reports whether that writer follows
// replaces, and if so keeps a mark on f (released when f is closed, after
// the rename) that a Stop of the follower waits for. The mark is taken
// before the follower's is looked at, so a follower that stops either is
// seen as stopped here or waits for this rename.
func followedReplace(f *os.File, st os.FileInfo, path string) bool {
	if markReplacing(f) != nil {
		return false
	}
	now, err := os.Stat(path)
	if err == nil && os.SameFile(now, st) {
		if ok, err := followed(f); err == nil && ok {
			return true
		}
	}
	unmarkReplacing(f)
	return false
}

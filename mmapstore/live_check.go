package mmapstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// errPathChanged: another file was put at the path while Live opened it,
// so the header Live checked may not be the one of the file it opened.
var errPathChanged = errors.New("mmapstore: live: the file at the path changed while it was opened")

// pinned is a file at the path, opened by Live itself to read its header in
// O(1) and to know its identity for as long as it is open.
type pinned struct {
	f     *os.File
	info  os.FileInfo
	ctime int64 // change time in ns; 0 where the platform has none
}

func pin(path string) (*pinned, error) {
	f, err := openPinned(path)
	if err != nil {
		return nil, fmt.Errorf("mmapstore: live: %w", err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		// A FIFO would block the filter's open until a writer came; a
		// device or folder is no filter either.
		err = &fs.PathError{Op: "live", Path: path, Err: notRegular(info)}
	}
	var ctime int64
	if err == nil {
		ctime, err = changeTime(f)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pinned{f: f, info: info, ctime: ctime}, nil
}

func (p *pinned) header() (Header, error) {
	var head [HeaderSize]byte
	n, err := p.f.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, fmt.Errorf("mmapstore: live: read header: %w", err)
	}
	return DecodeHeader(head[:n])
}

// A refusal remembers a file that failed verification, so that Reload does
// not read it whole again at every interval. It keeps the file open where
// the platform lets others delete an open file (Unix): while it is open its
// inode number cannot be given to a new file, so `rm` and `cp -p` of a good
// build (same size and modification time, and on ext4 often the same inode
// number) is never mistaken for it. The change time, which no copy tool
// can set, catches a rewrite of the same inode in place.
type refusal struct {
	p   *pinned
	err error
}

func (r *refusal) matches(info os.FileInfo, ctime int64) bool {
	return sameVersion(info, r.p.info) && ctime == r.p.ctime
}

func (r *refusal) drop() {
	if r.p.f != nil {
		r.p.f.Close()
		r.p.f = nil
	}
}

// stillRefused returns the error of the refused file if it is still the one
// at the path (info is its stat), and forgets it otherwise.
func (l *Live[T]) stillRefused(info os.FileInfo) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.refused
	if r == nil {
		return nil
	}
	ctime, err := pathChangeTime(l.path)
	if err == nil && r.matches(info, ctime) {
		return r.err
	}
	r.drop()
	l.refused = nil
	return nil
}

// setRefused replaces the remembered refusal with r (nil to forget it).
func (l *Live[T]) setRefused(r *refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refused != nil {
		l.refused.drop()
	}
	if r != nil && l.closed.Load() {
		r.drop()
		r = nil
	}
	l.refused = r
}

// load opens the file at the path and checks it (see Reload); served is the
// file being served, nil at start. A file that fails verification comes
// back as a refusal to remember, with the error.
func (l *Live[T]) load(verify bool, served os.FileInfo) (*generation[T], *refusal, error) {
	for attempt := 1; ; attempt++ {
		g, ref, err := l.loadOnce(verify, served)
		if !errors.Is(err, errPathChanged) || attempt == 3 {
			return g, ref, err
		}
	}
}

func (l *Live[T]) loadOnce(verify bool, served os.FileInfo) (*generation[T], *refusal, error) {
	p, err := pin(l.path)
	if err != nil {
		return nil, nil, err
	}
	var ref *refusal
	defer func() {
		if ref == nil { // else ref owns p.f
			p.f.Close()
		}
	}()
	h, herr := p.header()
	v, err := l.open(l.path)
	if err != nil {
		return nil, nil, err
	}
	// The header read above must be the one of the file open opened: the
	// same file is at the path after open as before (it cannot be a new
	// file with the same inode number: p keeps this one open).
	if now, err := os.Stat(l.path); err != nil || !os.SameFile(now, p.info) {
		v.Close()
		return nil, nil, fmt.Errorf("%w: %s", errPathChanged, l.path)
	}
	if vv, ok := any(v).(verifier); ok {
		if err := l.check(vv, h, herr, p.info, served, verify); err != nil {
			v.Close()
			if errors.Is(err, ErrPayloadChecksum) {
				ref = &refusal{p: p, err: err}
				if !keepRefusedOpen {
					p.f.Close()
					p.f = nil
				}
			}
			return nil, ref, err
		}
	}
	return newGeneration(v, p.info, l.shift), nil, nil
}

// check decides whether a filter that can verify itself may be served:
// its writer must have sealed it, unless it is the file being served
// (written in place), and, when verify is set, it must match its checksum.
func (l *Live[T]) check(v verifier, h Header, herr error, info, served os.FileInfo, verify bool) error {
	if herr != nil {
		return &fs.PathError{Op: "live", Path: l.path, Err: herr}
	}
	if !h.ChecksumCurrent() {
		if served != nil && os.SameFile(info, served) {
			return nil
		}
		if served == nil && isWriter(v) {
			// The first file, opened for writing by this process: it
			// holds the writer's lock, so the writer is this process
			// (a server that writes to the file it serves, recovering
			// it after a crash). A later file is a replacement and
			// must be sealed whoever opens it.
			return nil
		}
		err := fmt.Errorf("%w: its writer still has it open or was killed before sealing it; publish a finished build", ErrChecksumStale)
		return &fs.PathError{Op: "live", Path: l.path, Err: err}
	}
	if !verify {
		return nil // the caller vouches for the payload (TrustFirstFile)
	}
	if err := v.Verify(); err != nil {
		return fmt.Errorf("mmapstore: live: %w", err)
	}
	return nil
}

// isWriter reports whether v was opened for writing (ReadOnly false).
func isWriter(v any) bool {
	ro, ok := v.(interface{ ReadOnly() bool })
	return ok && !ro.ReadOnly()
}

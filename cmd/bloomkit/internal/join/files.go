package join

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// openFiles is every temporary file of a run, of which it keeps at most max
// open at once: the file used least recently is closed when another must be
// opened, and opened again when it is next used. Reads and writes are
// positioned (pread, pwrite), so a file reopened goes on where it was. With
// P partitions per input the run has thousands of files and an operator's
// "ulimit -n" may be 100: the bound keeps the run within it.
type openFiles struct {
	mu     sync.Mutex
	folder *tempFolder
	max    int
	paths  []string
	files  []*os.File      // by id; nil while closed
	uses   []*list.Element // by id: the file's place in lru while open
	lru    list.List       // ids of the open files, most recent first
}

func newOpenFiles(folder *tempFolder, max int) *openFiles {
	return &openFiles{folder: folder, max: max}
}

// fileLimitShare is the share of the process's open-file limit the
// temporary files may take: the rest is for the inputs, stdio, the runtime
// and whatever the caller holds.
func fileLimitShare(limit uint64) int {
	return int(min(1024, max(4, limit/2-min(limit/2, 8))))
}

// create makes a new empty file in the folder and returns its id.
func (o *openFiles) create(name string) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evict(1)
	f, err := o.folder.create(name)
	if err != nil {
		return 0, err
	}
	id := len(o.paths)
	o.paths = append(o.paths, f.Name())
	o.files = append(o.files, f)
	o.uses = append(o.uses, o.lru.PushFront(id))
	return id, nil
}

// evict closes the least recently used files until n more can be opened.
func (o *openFiles) evict(n int) {
	for o.lru.Len() > 0 && o.lru.Len()+n > o.max {
		id := o.lru.Remove(o.lru.Back()).(int)
		o.files[id].Close()
		o.files[id], o.uses[id] = nil, nil
	}
}

// file returns id's file, open; o.mu is held.
func (o *openFiles) file(id int) (*os.File, error) {
	if f := o.files[id]; f != nil {
		o.lru.MoveToFront(o.uses[id])
		return f, nil
	}
	o.evict(1)
	f, err := os.OpenFile(o.paths[id], os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) && o.folder.gone() {
			return nil, errStopped
		}
		return nil, err
	}
	o.files[id] = f
	o.uses[id] = o.lru.PushFront(id)
	return f, nil
}

func (o *openFiles) writeAt(id int, p []byte, off int64) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, err := o.file(id)
	if err != nil {
		return 0, err
	}
	n, err := f.WriteAt(p, off)
	if err != nil {
		err = tmpFullError(o.folder.path, err)
	}
	return n, err
}

func (o *openFiles) readAt(id int, p []byte, off int64) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, err := o.file(id)
	if err != nil {
		return 0, err
	}
	return f.ReadAt(p, off)
}

// open reports how many files are open now.
func (o *openFiles) open() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lru.Len()
}

// remove closes and deletes the file id.
func (o *openFiles) remove(id int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f := o.files[id]; f != nil {
		f.Close()
		o.lru.Remove(o.uses[id])
		o.files[id], o.uses[id] = nil, nil
	}
	os.Remove(o.paths[id])
}

// closeAll closes every open file (they stay on disk).
func (o *openFiles) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evict(o.max + 1)
}

// fileWriter writes one file from its start, through o.
type fileWriter struct {
	o   *openFiles
	id  int
	off int64
}

func (w *fileWriter) Write(p []byte) (int, error) {
	n, err := w.o.writeAt(w.id, p, w.off)
	w.off += int64(n)
	return n, err
}

// fileReader reads one file from its start, through o.
type fileReader struct {
	o   *openFiles
	id  int
	off int64
}

func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.o.readAt(r.id, p, r.off)
	r.off += int64(n)
	if n > 0 && err != nil {
		err = nil // the error comes again on the next read
	}
	return n, err
}

// tmpFullError makes a write error on a temporary file say what to do about it.
func tmpFullError(dir string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("the temporary folder %s is full (free space there or choose another with -tmp): %w", dir, err)
	}
	return err
}

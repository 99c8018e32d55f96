package growing

// Detach stops the filter from writing files at its path, for a writer
// whose file was replaced there by another (a build published over it):
// a running growth is waited for, later growths build their table in
// memory, and Checkpoint and Close leave the path alone (the history log
// keeps being appended to until Close). Path then reports "".
func (f *Filter) Detach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.growing && !f.closed {
		f.grown.Wait()
	}
	f.path = ""
}

// Flush hands the history's buffered digests to the operating system:
// they then survive the process (kill -9), not a machine crash (Sync
// waits for the disk). For a server that acknowledges each command's adds
// once they are written. After Close it returns ErrClosed; it does nothing
// for a read-only or in-memory filter.
func (f *Filter) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	if f.readOnly || f.log == nil {
		return nil
	}
	return f.log.Flush()
}

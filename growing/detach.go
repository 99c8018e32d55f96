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

package partitioned

// PrefaultWritable makes every page of a filter opened with OpenPrivate a
// private, writable copy at once, instead of a page fault at the first add
// to each page: before many adds, such as the replay of a long log into a
// snapshot. It costs O(size) and the filter's size in memory. It returns
// an error wrapping errors.ErrUnsupported, and changes nothing, for a
// filter mapped otherwise or where the system cannot do it
// (mmapstore.File.PrefaultWritable); nil for an in-memory filter.
func (f *Filter) PrefaultWritable() error { return f.store.PrefaultWritable() }

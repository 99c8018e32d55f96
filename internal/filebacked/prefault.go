package filebacked

// PrefaultWritable makes the pages of a file opened copy-on-write private
// and writable now (mmapstore.File.PrefaultWritable); an in-memory filter
// is writable already: nil.
func (s *Store) PrefaultWritable() error {
	if err := s.Usable(); err != nil {
		return err
	}
	if s.file == nil {
		return nil
	}
	return s.file.PrefaultWritable()
}

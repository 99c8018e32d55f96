package main

import (
	"path/filepath"
	"testing"
)

// A 6-byte text file given as a filter was reported as "truncated filter
// file"; it is not a filter file at all, and the message says so.
func TestShortForeignFileIsNotAFilter(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "six.bloom"), "hello\n")
	for _, args := range [][]string{{"info", "six.bloom"}, {"test", "six.bloom", "k"}, {"verify", "six.bloom"}} {
		r := bkIn(t, dir, "", args...)
		r.fails(t, "six.bloom", "not a bloomkit filter file")
	}
}

package join

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// input is one of the files.
type input struct {
	name    string
	regular bool        // a regular file named by its path, which can be read again
	info    fs.FileInfo // what it is (nil: unknown), for the same-file rule and the change checks
	size    int64       // its bytes when known (regular and not compressed), else -1
	avgLine float64     // bytes per line (newline included) in its first 64KiB
	passes  int         // full reads of it
	lines   uint64      // lines read by the first pass
	sum     uint64      // xxh3 of the bytes the first pass read (regular inputs)
	nbytes  uint64      // bytes the first pass read (regular inputs)
	parts   *partSet
}

// estLines is an estimate of the input's lines, or -1 if unknown.
func (in *input) estLines() float64 {
	if in.size < 0 {
		return -1
	}
	return float64(in.size) / in.avgLine
}

// tableNeed is the table memory the input's distinct lines could take, or
// MaxUint64 if unknown.
func (in *input) tableNeed() uint64 {
	if in.size < 0 {
		return math.MaxUint64
	}
	return tableBytes(uint64(in.estLines()*1.1)+16, uint64(in.size))
}

// statInput describes the input name ("-" is stdin, whose file is given
// when known).
func statInput(name string, stdin *os.File) (*input, error) {
	in := &input{name: name, size: -1}
	if name == "-" {
		in.info = stdinInfo(stdin)
		return in, nil
	}
	// Stat, not open: opening a FIFO would take its writer's data away
	// (or block until there is a writer). A pipe, FIFO or device is opened
	// once, when it is read.
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	in.info = st
	if !st.Mode().IsRegular() {
		return in, nil
	}
	in.regular = true
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	head = head[:n]
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return in, nil // compressed: its line count is unknown
	}
	in.size = st.Size()
	in.avgLine = float64(max(1, len(head))) / float64(max(1, bytes.Count(head, []byte{'\n'})))
	return in, nil
}

// stdinInfo is what stdin is, or nil when unknown or when it is a regular
// file read from an offset other than its start (it then holds other lines
// than the file named by its path).
func stdinInfo(f *os.File) fs.FileInfo {
	if f == nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	if st.Mode().IsRegular() {
		if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
			return nil
		}
	}
	return st
}

// sameFile reports whether a and b are one file: the same device and inode
// (two names of one file, /dev/stdin and -, a FIFO named twice), or both
// stdin.
func sameFile(a, b *input) bool {
	if a.name == "-" && b.name == "-" {
		return true
	}
	return a.info != nil && b.info != nil && os.SameFile(a.info, b.info)
}

// distinct drops every input that is the same file as a later one: a file
// named twice is read once, and since it has the same lines both times it
// changes no minimum (the answer for F and F is F's lines). The last input
// keeps its place, so the order printed is still the last one's. It
// returns the inputs kept and, for each dropped one, a note.
func distinct(inputs []*input) (kept []*input, notes []string) {
	for i, in := range inputs {
		later := -1
		for j := i + 1; j < len(inputs) && later < 0; j++ {
			if sameFile(in, inputs[j]) {
				later = j
			}
		}
		if later < 0 {
			kept = append(kept, in)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s and %s are the same file: read once", in.name, inputs[later].name))
	}
	return kept, notes
}

package lines

import (
	"bytes"
	"fmt"
)

// TooLongError is the error of a line longer than the maximum. Line is the
// line's number: within its chunk when Lines returns it, in the input once
// Run or Reader.Each returns it.
type TooLongError struct {
	Line uint64
	Max  int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("line %d longer than %d bytes", e.Line, e.Max)
}

// Chunk is a block of whole lines of the input: every line of Data ends
// in LF except, at the end of the input, the last one.
type Chunk struct {
	Seq  uint64 // 0 for the first chunk of the input
	Data []byte
	// First is the number of the first line of Data in the input (1 for
	// the first line); set by Run before the chunk is emitted, and by
	// Reader.Each.
	First uint64
	max   int
	// counted is the chunk's number of lines, empty ones included, plus
	// one, once a Lines iterator has walked all of them; 0 before.
	counted uint64
}

// Lines returns an iterator over the chunk's lines.
func (c *Chunk) Lines() Lines { return Lines{rest: c.Data, max: c.max, c: c} }

// Lines iterates the non-empty lines of a chunk, each without its LF and
// one CR before it. The zero value has no lines.
type Lines struct {
	rest []byte
	n    uint64 // lines passed, empty ones included
	max  int
	err  error
	c    *Chunk // told the count at the end (see Chunk.counted)
}

// Next returns the next non-empty line, a slice of the chunk valid as long
// as the chunk is, and true; false at the end or at a line longer than the
// maximum (then Err says so).
func (l *Lines) Next() ([]byte, bool) {
	for len(l.rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(l.rest, '\n'); i >= 0 {
			line, l.rest = l.rest[:i], l.rest[i+1:]
		} else {
			line, l.rest = l.rest, nil
		}
		l.n++
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if l.max > 0 && len(line) > l.max {
			l.err = &TooLongError{Line: l.n, Max: l.max}
			l.rest = nil
			return nil, false
		}
		if len(line) > 0 {
			return line, true
		}
	}
	if l.c != nil && l.err == nil { // every line walked: the pipeline needs no count of its own
		l.c.counted = l.n + 1
	}
	return nil, false
}

// Line is the number, within the chunk, of the line Next returned last.
func (l *Lines) Line() uint64 { return l.n }

// Err is the TooLongError that stopped Next, or nil.
func (l *Lines) Err() error { return l.err }

// lineCount is how many lines c holds, empty ones included: the count of
// the Lines that walked them all, or else counted again.
func (c *Chunk) lineCount() uint64 {
	if c.counted > 0 {
		return c.counted - 1
	}
	return countLines(c.Data)
}

// countLines is how many lines data holds, empty ones included.
func countLines(data []byte) uint64 {
	n := uint64(bytes.Count(data, []byte{'\n'}))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

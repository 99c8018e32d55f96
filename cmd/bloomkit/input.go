package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// defaultMaxLine is the longest input line accepted unless -max-line says
// otherwise; a longer line is an error naming its file and line number.
const defaultMaxLine = 1 << 20

// lineSource is where keys come from: files in order, or stdin when none.
type lineSource struct {
	files    []string
	stdin    io.Reader
	maxLine  int
	progress bool // draw a progress bar on stderr (only when it is a terminal)
	label    string
}

func newLineSource(files []string, maxLine int, label string) *lineSource {
	return &lineSource{files: files, stdin: os.Stdin, maxLine: maxLine, progress: stderrIsTerminal(), label: label}
}

func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// each calls fn with every non-empty line (without its line ending, CRLF
// included). Gzip input, recognised by its magic bytes, is decompressed. The
// slice passed to fn is valid only during the call.
func (s *lineSource) each(fn func(line []byte) error) error {
	if len(s.files) == 0 {
		return s.read("stdin", s.stdin, -1, fn)
	}
	for _, name := range s.files {
		if name == "-" {
			if err := s.read("stdin", s.stdin, -1, fn); err != nil {
				return err
			}
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		size := int64(-1)
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		err = s.read(name, f, size, fn)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *lineSource) read(name string, r io.Reader, size int64, fn func([]byte) error) error {
	if s.progress {
		bar := progressbar.DefaultBytes(size, s.label+" "+name)
		defer bar.Finish()
		r = io.TeeReader(r, bar)
	}
	br := bufio.NewReaderSize(r, 256<<10)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 256<<10)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), s.maxLine+2) // room for CR LF
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'})
		if len(line) > s.maxLine {
			return fmt.Errorf("%s:%d: line longer than %d bytes (see -max-line)", name, lineNo, s.maxLine)
		}
		if len(line) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes (see -max-line)", name, lineNo+1, s.maxLine)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// countLines counts the keys the source holds (for sizing a filter).
func (s *lineSource) count() (uint64, error) {
	var n uint64
	err := s.each(func([]byte) error { n++; return nil })
	return n, err
}

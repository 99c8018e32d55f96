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
	names    []string // how files are named in messages, when not by their path
	stdin    io.Reader
	maxLine  int
	progress bool // draw a progress bar on stderr (only when it is a terminal)
	// idle, when set, is called before a read waits for a pipe's writer
	// (see asyncReader); an error ends the reading.
	idle  func() error
	label string
	// tap, when set, wraps the raw reader of each input (before gzip is
	// undone): common checksums what it reads through it.
	tap func(io.Reader) io.Reader
}

func newLineSource(files []string, maxLine int, label string) *lineSource {
	return &lineSource{files: files, stdin: os.Stdin, maxLine: maxLine, progress: stderrIsTerminal(), label: label}
}

// lineSource is newLineSource reading std.in for stdin.
func (std stdio) lineSource(files []string, maxLine int, label string) *lineSource {
	s := newLineSource(files, maxLine, label)
	s.stdin = std.in
	// A progress bar is drawn on the process's stderr: only when that is
	// where the command prints.
	s.progress = s.progress && std.err == io.Writer(os.Stderr)
	return s
}

func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// each calls fn with every non-empty line without its line ending: the LF
// and exactly one CR before it (x CR CR LF is the line x CR); a CR at the
// very end of the input is dropped the same way. Gzip input, recognised by its magic bytes, is decompressed. The
// slice passed to fn is valid only during the call. Once a caught signal
// asks the command to stop, each returns an interruptedError, even from a
// read that was blocked on a pipe.
func (s *lineSource) each(fn func(line []byte) error) error {
	if len(s.files) == 0 {
		return s.eachOf("-", "stdin", fn)
	}
	for i, name := range s.files {
		display := name
		if name == "-" {
			display = "stdin"
		}
		if i < len(s.names) {
			display = s.names[i]
		}
		if err := s.eachOf(name, display, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *lineSource) eachOf(name, display string, fn func([]byte) error) error {
	r, size, err := s.open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	var raw io.Reader = r
	if s.tap != nil {
		raw = s.tap(r)
	}
	return s.read(display, raw, size, fn)
}

// open opens one input ("-" is stdin) and returns its size when known
// (-1 otherwise). Regular files are read directly; anything else (a FIFO,
// a pipe, /dev/fd/N, a terminal) can block in open and in read for as long
// as its writer likes, so it is read by a goroutine and a signal ends the
// wait (asyncReader).
func (s *lineSource) open(name string) (io.ReadCloser, int64, error) {
	if name == "-" {
		f, ok := s.stdin.(*os.File)
		if !ok {
			return io.NopCloser(stoppableReader{s.stdin}), -1, nil
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return io.NopCloser(stoppableReader{f}), -1, nil
		}
		a := newAsyncReader(func() (*os.File, error) { return f, nil }, false)
		a.idle = s.idle
		return a, -1, nil
	}
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		a := newAsyncReader(func() (*os.File, error) { return os.Open(name) }, true)
		a.idle = s.idle
		return a, -1, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return readCloser{stoppableReader{f}, f}, size, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// rereadable reports whether name ("-" is stdin) can be read a second time
// with the same content: only a regular file named by its path can.
func rereadable(name string) bool {
	if name == "-" {
		return false // stdin, even from a file, is read from its offset once
	}
	st, err := os.Stat(name)
	return err != nil || st.Mode().IsRegular() // a missing file fails in either pass
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
	sc.Split(scanLines)
	lineNo := 0
	for sc.Scan() {
		if err := interrupted(); err != nil {
			return err
		}
		lineNo++
		line := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'}) // exactly one CR
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

// scanLines splits at LF and returns each line with everything before its
// LF, CRs included (bufio.ScanLines drops a CR itself, so that trimming one
// more dropped both of CR CR LF); the end of the input ends the last line.
// The caller drops exactly one CR.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// countLines counts the keys the source holds (for sizing a filter).
func (s *lineSource) count() (uint64, error) {
	var n uint64
	err := s.each(func([]byte) error { n++; return nil })
	return n, err
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
)

// defaultMaxLine is the longest input line accepted unless -max-line says
// otherwise; a longer line is an error naming its file and line number.
const defaultMaxLine = 1 << 20

// lineChunkSize is the size of the chunks line sources read (0: the
// default of package lines); tests make it tiny, so that inputs of a few
// lines cross many chunks.
var lineChunkSize = 0

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
// very end of the input is dropped the same way (the rules of package
// lines). Gzip input, recognised by its magic bytes, is decompressed. The
// slice passed to fn is valid only during the call. Once a caught signal
// asks the command to stop, each returns an interruptedError, even from a
// read that was blocked on a pipe. each runs fn on the calling goroutine,
// line after line; eachChunk (pipeline.go) spreads the work over every
// core.
func (s *lineSource) each(fn func(line []byte) error) error {
	return s.inputs(func(in *input) error {
		return in.wrap(lines.Each(in.r, in.cfg, func(c *lines.Chunk) error {
			l := c.Lines()
			for line, ok := l.Next(); ok; line, ok = l.Next() {
				if err := interrupted(); err != nil {
					return err
				}
				if err := fn(line); err != nil {
					return err
				}
			}
			return l.Err()
		}))
	})
}

// input is one open input of a line source, ready for package lines.
type input struct {
	name string // as messages name it
	r    io.Reader
	cfg  lines.Config
	max  int
}

// wrap names the input in a read error and turns a too-long line into
// the command's message.
func (in *input) wrap(err error) error {
	var tl *lines.TooLongError
	var sig interruptedError
	switch {
	case err == nil, errors.As(err, &sig):
		return err
	case errors.As(err, &tl):
		return fmt.Errorf("%s:%d: line longer than %d bytes (see -max-line)", in.name, tl.Line, in.max)
	case errors.Is(err, errRead):
		return fmt.Errorf("%s: %w", in.name, errors.Unwrap(err))
	}
	return err
}

// errRead marks the errors of reading an input (see readErrors), which
// wrap names the input in; the errors of fn pass unchanged.
var errRead = errors.New("read")

// readErrors wraps a reader's errors but EOF and a signal's in errRead.
type readErrors struct{ r io.Reader }

func (r readErrors) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	var sig interruptedError
	if err != nil && err != io.EOF && !errors.As(err, &sig) {
		err = readError{err}
	}
	return n, err
}

type readError struct{ err error }

func (e readError) Error() string        { return e.err.Error() }
func (e readError) Unwrap() error        { return e.err }
func (e readError) Is(target error) bool { return target == errRead }

// inputs opens each input of s in turn (stdin when there are none) and
// calls fn with it.
func (s *lineSource) inputs(fn func(in *input) error) error {
	files := s.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	for i, name := range files {
		display := name
		if name == "-" {
			display = "stdin"
		}
		if i < len(s.names) {
			display = s.names[i]
		}
		if err := s.with(name, display, fn); err != nil {
			return err
		}
	}
	return nil
}

// with opens one input and calls fn with it; the hook of lines.Config's
// Pause is what the input calls before it waits for its writer.
func (s *lineSource) with(name, display string, fn func(in *input) error) error {
	var pause func() error
	r, size, err := s.openIdle(name, func() error {
		if pause == nil {
			return nil
		}
		return pause()
	})
	if err != nil {
		return err
	}
	defer r.Close()
	var raw io.Reader = r
	if s.tap != nil {
		raw = s.tap(r)
	}
	in := &input{name: display, max: s.maxLine, cfg: lines.Config{
		MaxLine:   s.maxLine,
		ChunkSize: lineChunkSize,
		Stream:    size < 0, // a pipe, a FIFO, a terminal: its writer may pause
		Stop:      interrupted,
		Idle:      s.idle,
		Pause:     func(hook func() error) { pause = hook },
	}}
	if s.progress {
		bar := progressbar.DefaultBytes(size, s.label+" "+display)
		defer bar.Finish()
		raw = io.TeeReader(raw, bar)
	}
	in.r, err = ungzip(readErrors{raw})
	if err != nil {
		return in.wrap(err)
	}
	// The gzip reader is not closed: its Close only releases it, and a
	// pipeline stopped by an error may leave its reading goroutine inside
	// a Read (lines.Run) when fn returns.
	return fn(in)
}

// ungzip is r, decompressed when it starts with the gzip magic bytes.
func ungzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil // a read error shows at the first read
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, readError{err}
	}
	return readErrors{zr}, nil
}

// open opens one input ("-" is stdin) and returns its size when known
// (-1 otherwise). Regular files are read directly; anything else (a FIFO,
// a pipe, /dev/fd/N, a terminal) can block in open and in read for as long
// as its writer likes, so it is read by a goroutine and a signal ends the
// wait (asyncReader).
func (s *lineSource) open(name string) (io.ReadCloser, int64, error) {
	return s.openIdle(name, s.idle)
}

// openIdle is open with idle called before a read waits for a writer.
func (s *lineSource) openIdle(name string, idle func() error) (io.ReadCloser, int64, error) {
	if name == "-" {
		f, ok := s.stdin.(*os.File)
		if !ok {
			return io.NopCloser(stoppableReader{s.stdin}), -1, nil
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return io.NopCloser(stoppableReader{watchSize(f, st)}), -1, nil
		}
		a := newAsyncReader(func() (*os.File, error) { return f, nil }, false)
		a.idle = idle
		return a, -1, nil
	}
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		a := newAsyncReader(func() (*os.File, error) { return os.Open(name) }, true)
		a.idle = idle
		return a, -1, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	size := int64(-1)
	var r io.Reader = f
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
		r = watchSize(f, st)
	}
	return readCloser{stoppableReader{r}, f}, size, nil
}

// sizeWatch reads a regular file to its end and then checks that it did
// not change while it was read: a file truncated under the reader (cut
// mid-line by its writer, or emptied by a rotation) or appended to would
// otherwise end in a silent partial answer, its cut last line taken as a
// key. The bytes read must be the bytes the file held when it was opened
// (from the offset it was opened at, for stdin) and still holds.
type sizeWatch struct {
	f          *os.File
	start, end int64 // the offsets of the first and the last byte + 1 at open
	read       int64
}

// watchSize is f, of stat st, read through a sizeWatch; f unchanged when
// its offset cannot be told, or its size is 0: the files of /proc and /sys
// say 0 and hold what is read from them (the two passes of build -n still
// compare what they read).
func watchSize(f *os.File, st os.FileInfo) io.Reader {
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil || st.Size() == 0 {
		return f
	}
	return &sizeWatch{f: f, start: off, end: st.Size()}
}

func (w *sizeWatch) Read(p []byte) (int, error) {
	n, err := w.f.Read(p)
	w.read += int64(n)
	if err == io.EOF {
		if cerr := w.check(); cerr != nil {
			return n, cerr
		}
	}
	return n, err
}

// check compares the bytes read with the file's size at open and now.
func (w *sizeWatch) check() error {
	st, err := w.f.Stat()
	if err != nil {
		return readError{err}
	}
	want := w.end - w.start
	if w.read == want && st.Size() == w.end {
		return nil
	}
	return readError{fmt.Errorf("%w: %d bytes when opened, %d read, %d now (truncated or appended to while it was read)",
		errChangedWhileRead, want, w.read, st.Size()-w.start)}
}

// errChangedWhileRead: a regular file's size changed while it was read.
var errChangedWhileRead = errors.New("the file changed while it was read")

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

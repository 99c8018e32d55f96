package lines

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/bloomkit/bloomkit"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/partitioned"
)

// reference splits data by the rules in the package doc, the slow way.
// It returns the lines and, when a line is longer than max, its number.
func reference(data string, max int) (lines []string, tooLong uint64) {
	if data == "" {
		return nil, 0
	}
	parts := strings.Split(data, "\n")
	if strings.HasSuffix(data, "\n") {
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		p = strings.TrimSuffix(p, "\r")
		if len(p) > max {
			return lines, uint64(i + 1)
		}
		if p != "" {
			lines = append(lines, p)
		}
	}
	return lines, 0
}

// randomInput is lines of random lengths (some longer than the chunk,
// some empty) over an alphabet rich in CR and LF, with or without a final
// newline.
func randomInput(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(200) {
		n := r.IntN(8)
		if r.IntN(20) == 0 {
			n = r.IntN(300)
		}
		for range n {
			b.WriteByte("ab\r\x00\x1f\x8bxyz"[r.IntN(9)])
		}
		switch r.IntN(4) {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteString("\r\r\n")
		default:
			b.WriteByte('\n')
		}
	}
	if r.IntN(2) == 0 {
		b.WriteString("tail\r")
	}
	return b.String()
}

// readers wraps data in the readers a command meets: whole reads, one
// byte at a time, half reads, data with the EOF.
func readers(data string) map[string]io.Reader {
	return map[string]io.Reader{
		"plain":   strings.NewReader(data),
		"onebyte": iotest.OneByteReader(strings.NewReader(data)),
		"half":    iotest.HalfReader(strings.NewReader(data)),
		"dataerr": iotest.DataErrReader(strings.NewReader(data)),
	}
}

// collectEach gathers lines with Each.
func collectEach(r io.Reader, cfg Config) ([]string, error) {
	var got []string
	err := Each(r, cfg, func(c *Chunk) error {
		l := c.Lines()
		for line, ok := l.Next(); ok; line, ok = l.Next() {
			got = append(got, string(line))
		}
		return l.Err()
	})
	return got, err
}

// collectRun gathers lines with Run: the workers copy them, emit appends.
func collectRun(r io.Reader, cfg Config) ([]string, error) {
	var got []string
	err := Run(r, cfg, func(c *Chunk, res *[]string) error {
		*res = (*res)[:0]
		l := c.Lines()
		for line, ok := l.Next(); ok; line, ok = l.Next() {
			*res = append(*res, string(line))
		}
		return l.Err()
	}, func(c *Chunk, res *[]string) error {
		got = append(got, *res...)
		return nil
	})
	return got, err
}

func TestSplitMatchesReference(t *testing.T) {
	seed := uint64(20261125)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range 300 {
		data := randomInput(r)
		max := []int{1, 5, 40, 1000}[r.IntN(4)]
		chunk := []int{1, 2, 7, 64, 4096}[r.IntN(5)]
		want, tooLong := reference(data, max)
		for name, rd := range readers(data) {
			stream := r.IntN(2) == 0
			cfg := Config{MaxLine: max, ChunkSize: chunk, Workers: 1 + r.IntN(3), Stream: stream}
			collect := collectEach
			how := "each"
			if r.IntN(2) == 0 {
				collect, how = collectRun, "run"
			}
			got, err := collect(rd, cfg)
			msg := fmt.Sprintf("case %d %s %s max=%d chunk=%d stream=%v input %q", i, how, name, max, chunk, stream, data)
			if tooLong != 0 {
				var tl *TooLongError
				require.ErrorAs(t, err, &tl, msg)
				require.Equal(t, tooLong, tl.Line, msg)
				require.Equal(t, want, got[:min(len(got), len(want))], msg)
				continue
			}
			require.NoError(t, err, msg)
			require.Equal(t, want, got, msg)
		}
	}
}

func TestEdges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n\n\r\n", nil},
		{"a", []string{"a"}},
		{"a\r", []string{"a"}},
		{"a\r\r", []string{"a\r"}},
		{"a\r\r\nb\r\n", []string{"a\r", "b"}},
		{"a\nb", []string{"a", "b"}},
		{"\x00\n\x1f\x8b\n", []string{"\x00", "\x1f\x8b"}},
	} {
		for _, chunk := range []int{1, 2, 3, 1 << 20} {
			for _, collect := range []func(io.Reader, Config) ([]string, error){collectEach, collectRun} {
				got, err := collect(strings.NewReader(tc.in), Config{MaxLine: 10, ChunkSize: chunk})
				require.NoError(t, err)
				require.Equal(t, tc.want, got, "%q chunk %d", tc.in, chunk)
			}
		}
	}
}

// TestCRLFAtChunkEdges puts the CR, the LF and CR CR LF on every side of
// every chunk boundary.
func TestCRLFAtChunkEdges(t *testing.T) {
	in := strings.Repeat("abc\r\r\nde\r\nf\n", 50)
	want, _ := reference(in, 100)
	for chunk := 1; chunk <= 24; chunk++ {
		for _, stream := range []bool{false, true} {
			for _, collect := range []func(io.Reader, Config) ([]string, error){collectEach, collectRun} {
				got, err := collect(iotest.HalfReader(strings.NewReader(in)), Config{MaxLine: 100, ChunkSize: chunk, Stream: stream})
				require.NoError(t, err)
				require.Equal(t, want, got, "chunk %d", chunk)
			}
		}
	}
}

// TestLongLines: lines far longer than a chunk, up to the maximum and one
// past it, with the error naming the right line.
func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 5000)
	in := "a\n\n" + long + "\r\nb\n" + long + "y\r\r\nc\n"
	for _, collect := range []func(io.Reader, Config) ([]string, error){collectEach, collectRun} {
		got, err := collect(strings.NewReader(in), Config{MaxLine: 5002, ChunkSize: 16})
		require.NoError(t, err)
		require.Equal(t, []string{"a", long, "b", long + "y\r", "c"}, got)

		got, err = collect(strings.NewReader(in), Config{MaxLine: 5000, ChunkSize: 16})
		var tl *TooLongError
		require.ErrorAs(t, err, &tl)
		require.Equal(t, uint64(5), tl.Line)
		require.Equal(t, []string{"a", long, "b"}, got)

		// Found by the reader (no LF within MaxLine+2 bytes), not by Lines.
		got, err = collect(strings.NewReader("a\nb\n"+long+long), Config{MaxLine: 100, ChunkSize: 8})
		require.ErrorAs(t, err, &tl)
		require.Equal(t, uint64(3), tl.Line)
		require.Equal(t, []string{"a", "b"}, got)
	}
}

// TestRunKeepsOrder: many chunks, workers that take very different times,
// emit sees them in input order with the right first line numbers.
func TestRunKeepsOrder(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "%d\n", i)
	}
	next := uint64(0)
	line := uint64(1)
	err := Run(strings.NewReader(b.String()), Config{MaxLine: 100, ChunkSize: 37, Workers: 4},
		func(c *Chunk, res *[]uint64) error {
			*res = (*res)[:0]
			l := c.Lines()
			for s, ok := l.Next(); ok; s, ok = l.Next() {
				var v uint64
				fmt.Sscan(string(s), &v)
				*res = append(*res, v)
			}
			if c.Seq%7 == 0 {
				for range 1000 {
					_ = fmt.Sprint(c.Seq) // unequal work
				}
			}
			return nil
		}, func(c *Chunk, res *[]uint64) error {
			require.Equal(t, line, c.First)
			for _, v := range *res {
				require.Equal(t, next, v)
				next++
			}
			line += uint64(len(*res))
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, uint64(20000), next)
}

// TestRunStops: Stop ends the run with its error, nothing emitted after;
// an emit error ends it too; a read error comes after the lines before it.
func TestRunStops(t *testing.T) {
	in := strings.Repeat("line\n", 10000)
	errStop := errors.New("stop")
	var emitted atomic.Int64 // Stop runs on the workers too
	err := Run(strings.NewReader(in), Config{MaxLine: 10, ChunkSize: 50, Stop: func() error {
		if emitted.Load() >= 100 {
			return errStop
		}
		return nil
	}, Workers: 1}, func(c *Chunk, res *int) error {
		l := c.Lines()
		*res = 0
		for _, ok := l.Next(); ok; _, ok = l.Next() {
			*res++
		}
		return nil
	}, func(c *Chunk, res *int) error { emitted.Add(int64(*res)); return nil })
	require.ErrorIs(t, err, errStop)
	require.GreaterOrEqual(t, emitted.Load(), int64(100))
	require.Less(t, emitted.Load(), int64(200))

	errEmit := errors.New("emit")
	n := 0
	err = Run(strings.NewReader(in), Config{MaxLine: 10, ChunkSize: 50}, func(*Chunk, *int) error { return nil },
		func(*Chunk, *int) error {
			n++
			if n == 3 {
				return errEmit
			}
			return nil
		})
	require.ErrorIs(t, err, errEmit)
	require.Equal(t, 3, n)

	errRead := errors.New("read")
	for _, collect := range []func(io.Reader, Config) ([]string, error){collectEach, collectRun} {
		got, err := collect(io.MultiReader(strings.NewReader("a\nb\nc"), iotest.ErrReader(errRead)), Config{MaxLine: 10, ChunkSize: 4})
		require.ErrorIs(t, err, errRead)
		require.Equal(t, []string{"a", "b"}, got)
	}
}

// pausingReader calls its hook before it returns each part after the
// first, as the command's pipe reader does before it waits for a writer.
type pausingReader struct {
	parts []string
	hook  func() error
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if len(p.parts) == 0 {
		return 0, io.EOF
	}
	if p.hook != nil {
		if err := p.hook(); err != nil {
			return 0, err
		}
	}
	n := copy(b, p.parts[0])
	p.parts[0] = p.parts[0][n:]
	if p.parts[0] == "" {
		p.parts = p.parts[1:]
	}
	return n, nil
}

// TestIdleAfterLinesSoFar: in Stream mode, Idle runs after every whole
// line read before the pause was emitted, on emit's goroutine.
func TestIdleAfterLinesSoFar(t *testing.T) {
	for _, collect := range []string{"each", "run"} {
		pr := &pausingReader{parts: []string{"a\nb", "\nc\n", "d\n"}}
		var got []string
		var atIdle []int
		cfg := Config{MaxLine: 10, Stream: true, Pause: func(h func() error) { pr.hook = h },
			Idle: func() error { atIdle = append(atIdle, len(got)); return nil }}
		add := func(c *Chunk) {
			l := c.Lines()
			for s, ok := l.Next(); ok; s, ok = l.Next() {
				got = append(got, string(s))
			}
		}
		var err error
		if collect == "each" {
			err = Each(pr, cfg, func(c *Chunk) error { add(c); return nil })
		} else {
			err = Run(pr, cfg, func(*Chunk, *struct{}) error { return nil }, func(c *Chunk, _ *struct{}) error { add(c); return nil })
		}
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c", "d"}, got)
		require.Equal(t, []int{0, 1, 3}, atIdle, collect)
	}
}

func TestNoAllocationPerLine(t *testing.T) {
	data := []byte(strings.Repeat("some key\r\n", 1000))
	c := &Chunk{Data: data, max: 100}
	allocs := testing.AllocsPerRun(10, func() {
		l := c.Lines()
		for _, ok := l.Next(); ok; _, ok = l.Next() {
		}
	})
	require.Zero(t, allocs)
}

var sink int

func BenchmarkLines(b *testing.B) {
	data := bytes.Repeat([]byte("https://www.example.com/catalog/e220a8397b1dcdaf/p00000\n"), 1<<14)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	c := &Chunk{Data: data, max: 1 << 20}
	for b.Loop() {
		l := c.Lines()
		for s, ok := l.Next(); ok; s, ok = l.Next() {
			sink += len(s)
		}
	}
}

// BenchmarkRun reads 56-byte lines through the whole pipeline, counting
// bytes on the workers: the cost of reading, cutting and ordering.
func BenchmarkRun(b *testing.B) {
	data := bytes.Repeat([]byte("https://www.example.com/catalog/e220a8397b1dcdaf/p00000\n"), 1<<18)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		total := 0
		err := Run(bytes.NewReader(data), Config{MaxLine: 1 << 20}, func(c *Chunk, res *int) error {
			l := c.Lines()
			*res = 0
			for s, ok := l.Next(); ok; s, ok = l.Next() {
				*res += len(s)
			}
			return nil
		}, func(_ *Chunk, res *int) error { total += *res; return nil })
		if err != nil || total != 55<<18 {
			b.Fatal(err, total)
		}
	}
}

// BenchmarkBuildPartitioned is build's work on 2^21 56-byte lines into a
// partitioned filter of 2^21 keys (2.5 MB, past the L2 cache): "digests"
// is what build does (split and hash on the workers, Builder.AddDigests in
// input order), "keys" what it did
// before (split on the workers, Builder.AddMany hashing in input order).
func BenchmarkBuildPartitioned(b *testing.B) {
	const n = 1 << 21
	data := make([]byte, 0, 56*n)
	for i := range n {
		data = fmt.Appendf(data, "https://www.example.com/catalog/%016x/p%05d\n", uint64(i)*0x9e3779b97f4a7c15, i%100000)
	}
	f, err := partitioned.New(n, 0.01)
	require.NoError(b, err)
	type batch struct {
		keys    [][]byte
		digests []bloomkit.Digest
	}
	for _, mode := range []string{"digests", "keys"} {
		b.Run(mode, func(b *testing.B) {
			bld := f.Builder()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				err := Run(bytes.NewReader(data), Config{MaxLine: 1 << 20}, func(c *Chunk, r *batch) error {
					r.keys, r.digests = r.keys[:0], r.digests[:0]
					l := c.Lines()
					for s, ok := l.Next(); ok; s, ok = l.Next() {
						if mode == "digests" {
							r.digests = append(r.digests, f.Hash(s))
						} else {
							r.keys = append(r.keys, s)
						}
					}
					return nil
				}, func(_ *Chunk, r *batch) error {
					if mode == "digests" {
						bld.AddDigests(r.digests)
					} else {
						bld.AddMany(r.keys)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlines/s")
		})
	}
}

// TestWalkedLinesAreCounted: a chunk whose lines a Lines walked to the end
// knows its count (empty lines, a CR and an unterminated last line
// included) without counting again; one walked part way, or stopped by a
// line too long, is counted from its data.
func TestWalkedLinesAreCounted(t *testing.T) {
	for _, data := range []string{"", "\n", "a", "a\n", "a\n\nb\r\n\r\n", "a\nbb\n\n\nc", "a\r\r\n\n"} {
		c := &Chunk{Data: []byte(data), max: 100}
		l := c.Lines()
		l.Next()
		if strings.Count(data, "\n") > 1 {
			require.Zero(t, c.counted, "%q walked part way", data)
		}
		for _, ok := l.Next(); ok; _, ok = l.Next() {
		}
		require.Equal(t, countLines(c.Data), c.lineCount(), "%q", data)
		require.NotZero(t, c.counted, "%q walked to the end", data)
	}
	c := &Chunk{Data: []byte("a\nlong line\nb\n"), max: 4}
	l := c.Lines()
	for _, ok := l.Next(); ok; _, ok = l.Next() {
	}
	require.Error(t, l.Err())
	l.Next()
	require.Zero(t, c.counted, "a walk stopped by a long line counts nothing")
	require.Equal(t, uint64(3), c.lineCount())
}

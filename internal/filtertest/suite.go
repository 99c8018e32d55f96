package filtertest

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/sizing"
)

// RejectsBadArguments checks that New and NewWithSize (when the variant has
// it) refuse what cannot be a filter with v.ErrInvalid, and what is too
// large with v.ErrTooLarge: beyond the format, beyond uint64, or (hugeN keys
// at 1%, hugeM cells) beyond this machine's memory, where the variant says
// what that is.
func RejectsBadArguments[F File[F]](t *testing.T, v Variant[F], hugeN, hugeM uint64) {
	for _, c := range []struct {
		n    uint64
		p    float64
		want error
	}{
		{0, 0.01, v.ErrInvalid},
		{100, 0, v.ErrInvalid},
		{100, 1, v.ErrInvalid},
		{100, -0.5, v.ErrInvalid},
		{100, 1.5, v.ErrInvalid},
		{100, math.NaN(), v.ErrInvalid},
		{100, math.Inf(1), v.ErrInvalid},
		{100, math.Inf(-1), v.ErrInvalid},
		{100, 1e-300, v.ErrInvalid},          // would need k > 64
		{1 << 62, 1e-12, v.ErrTooLarge},      // beyond the format
		{hugeN, 0.01, v.ErrTooLarge},         // beyond this machine's memory
		{math.MaxUint64, 0.5, v.ErrTooLarge}, // m overflows uint64
	} {
		f, err := v.New(c.n, c.p, 0)
		require.ErrorIs(t, err, c.want, "New(%d, %v)", c.n, c.p)
		require.Nil(t, f)
	}
	for _, c := range []struct {
		m    uint64
		k    uint32
		want error
	}{
		{0, 3, v.ErrInvalid},
		{1000, 0, v.ErrInvalid},
		{1000, 65, v.ErrInvalid},
		{sizing.MaxCells + 1, 3, v.ErrTooLarge},
		{hugeM, 3, v.ErrTooLarge}, // beyond this machine's memory
	} {
		if v.NewWithSize == nil {
			break
		}
		_, err := v.NewWithSize(c.m, c.k, 0)
		require.ErrorIs(t, err, c.want, "NewWithSize(%d, %d)", c.m, c.k)
	}
}

// AddReportsNew checks that Add reports a new key once, in byte and string
// form alike, and returns the filter that holds "x", added three times.
func AddReportsNew[F File[F]](t *testing.T, v Variant[F]) F {
	f, err := v.New(1000, 0.01, 0)
	require.NoError(t, err)
	require.True(t, f.Add([]byte("x")))
	require.False(t, f.Add([]byte("x")))
	require.False(t, f.AddString("x"), "string and byte forms hash alike")
	require.True(t, f.ContainsString("x"))
	require.False(t, f.Contains([]byte("y")))
	return f
}

// StreamRoundTrip writes a filter to a stream, reads it back and checks the
// copy: same words, geometry and count, and the same bytes written again.
func StreamRoundTrip[F Stream[F]](t *testing.T, v Variant[F]) {
	f, err := v.New(50000, 0.001, 77)
	require.NoError(t, err)
	AddKeys(f, 1, 50000)
	if v.Hooks.Streaming != nil {
		v.Hooks.Streaming(t, f)
	}
	var buf bytes.Buffer
	n, err := f.WriteTo(&buf)
	require.NoError(t, err)
	require.EqualValues(t, buf.Len(), n)
	require.EqualValues(t, 8192+f.Bytes(), n)

	g, err := v.ReadFrom(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, v.Words(f), v.Words(g))
	require.Equal(t, v.Geometry(f), v.Geometry(g))
	require.Equal(t, f.Added(), g.Added())
	NoFalseNegatives(t, g, 1, 50000)
	if v.Hooks.Streamed != nil {
		v.Hooks.Streamed(t, g)
	}

	// Writing the copy again gives the same bytes.
	var again bytes.Buffer
	_, err = g.WriteTo(&again)
	require.NoError(t, err)
	require.Equal(t, buf.Bytes(), again.Bytes())
}

// UnionIntersect combines filters of the same geometry and checks that a
// filter of another seed, m or k is refused with ErrMismatch.
func UnionIntersect[F Combiner[F]](t *testing.T, v Variant[F]) {
	newF := func(n uint64) F {
		f, err := v.New(n, 0.01, 5)
		require.NoError(t, err)
		return f
	}
	a, b := newF(20000), newF(20000)
	AddKeys(a, 1, 5000)
	AddKeys(b, 2, 5000)
	AddKeys(a, 3, 5000) // common to both
	AddKeys(b, 3, 5000)

	u := newF(20000)
	require.NoError(t, u.Union(a))
	require.NoError(t, u.Union(b))
	for _, set := range []uint64{1, 2, 3} {
		NoFalseNegatives(t, u, set, 5000)
	}
	if v.Hooks.Unioned != nil {
		v.Hooks.Unioned(t, u, a, b)
	}

	require.NoError(t, a.Intersect(b))
	NoFalseNegatives(t, a, 3, 5000)
	// Keys only in one input mostly disappear from the intersection.
	require.Less(t, CountFalsePositives(a, 1, 5000), uint64(1000))
	if v.Hooks.Intersected != nil {
		v.Hooks.Intersected(t, a, b)
	}

	for _, other := range []func() (F, error){
		func() (F, error) { return v.New(20000, 0.01, 6) }, // seed
		func() (F, error) { return v.New(30000, 0.01, 5) }, // m
		func() (F, error) { return v.NewWithSize(v.Cells(u), u.K()+1, 5) },
	} {
		o, err := other()
		require.NoError(t, err)
		require.ErrorIs(t, u.Union(o), v.ErrMismatch)
		require.ErrorIs(t, u.Intersect(o), v.ErrMismatch)
	}
}

// FPRCase is one target rate of FalsePositiveRate: the measured rate at
// capacity must stay within Factor x P over Trials absent keys (0: as many
// as TrialsFor says the bound needs). A Long case runs only when Long().
type FPRCase struct {
	Name   string
	P      float64
	Trials uint64
	Factor float64
	Long   bool
}

// FalsePositiveRate fills a filter for n = 200000 keys to capacity and
// measures its false-positive rate against the target, with the bound that
// FPRBound checks is far enough from the formula's expectation (v.FPR) that
// no seed could fail a correct filter. Keys come from fixed seeds, so the
// counts are the same on every run. It also checks that the introspection
// agrees with the formula at capacity: ApproxCount within countTol x n,
// EstimatedFPR within 10% of the target, the fill ratio within 0.01.
func FalsePositiveRate[F File[F]](t *testing.T, v Variant[F], countTol float64, cases []FPRCase) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Long {
				SkipUnlessLong(t, "a sweep of tens of millions of lookups")
			}
			if RaceEnabled {
				t.Skip("a single-threaded statistical test: the pass without -race runs it")
			}
			const n = 200_000
			f, err := v.New(n, c.P, 0)
			require.NoError(t, err)
			AddKeys(f, 1, n)
			if v.Hooks.Loaded != nil {
				v.Hooks.Loaded(t, f, n)
			}
			NoFalseNegatives(t, f, 1, n)
			expected := v.FPR(v.Cells(f), n, f.K())
			trials := c.Trials
			if trials == 0 {
				trials = TrialsFor(expected, c.P, c.Factor)
				require.NotZero(t, trials, "the formula's rate %.4g is above %.2f x %.4g", expected, c.Factor, c.P)
			}
			fp := CountFalsePositives(f, 2, trials)
			FPRBound(t, fp, trials, expected, c.P, c.Factor)

			// Introspection agrees with the formula at capacity.
			require.InDelta(t, n, float64(f.ApproxCount()), countTol*n)
			require.InDelta(t, c.P, f.EstimatedFPR(), 0.1*c.P)
			fill := -math.Expm1(-float64(f.K()) * n / float64(v.Cells(f)))
			require.InDelta(t, fill, f.FillRatio(), 0.01)
			if v.Hooks.AtCapacity != nil {
				v.Hooks.AtCapacity(t, f, n)
			}
		})
	}
}

// FailingWriter accepts Left bytes, then fails every Write with "disk full".
type FailingWriter struct{ Left int }

func (w *FailingWriter) Write(p []byte) (int, error) {
	if len(p) > w.Left {
		n := w.Left
		w.Left = 0
		return n, errors.New("disk full")
	}
	w.Left -= len(p)
	return len(p), nil
}

// WriterFails checks that write, given a writer that fails after left bytes,
// returns the writer's error and counts exactly the bytes written.
func WriterFails(t testing.TB, write func(io.Writer) (int64, error), left int) {
	t.Helper()
	n, err := write(&FailingWriter{Left: left})
	require.ErrorContains(t, err, "disk full")
	require.EqualValues(t, left, n)
}

//go:build unix

package mmapstore

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sealedFile makes a closed filter file at path whose first word is word.
func sealedFile(t testing.TB, path string, word uint64) {
	t.Helper()
	f, err := Create(path, testHeader())
	require.NoError(t, err)
	f.Words()[0] = word
	require.NoError(t, f.Close(word))
}

// firstWord reads word 0 of the filter file at path.
func firstWord(t testing.TB, path string) uint64 {
	t.Helper()
	f, err := OpenReadOnly(path, Standard)
	require.NoError(t, err)
	defer f.Close(0)
	return f.Words()[0]
}

// TestWriterChild is the writer process of the tests below (`bloomkit add`
// in miniature): it opens BLOOMKIT_WRITER_CHILD for writing, sets word 1,
// says "open", then obeys "sync" and "close" lines on stdin, answering each
// with "ok", "replaced" (ErrReplaced) or the error.
func TestWriterChild(t *testing.T) {
	path := os.Getenv("BLOOMKIT_WRITER_CHILD")
	if path == "" {
		t.Skip("the writer process of TestReplaceWaitsForWriter and TestWriterSeesReplace")
	}
	f, err := Open(path, Standard)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		return
	}
	f.Words()[1] = 0x55
	os.Stdout.WriteString("open\n")
	answer := func(err error) {
		switch {
		case err == nil:
			os.Stdout.WriteString("ok\n")
		case errors.Is(err, ErrReplaced):
			os.Stdout.WriteString("replaced " + err.Error() + "\n")
		default:
			os.Stdout.WriteString("error " + err.Error() + "\n")
		}
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "sync":
			answer(f.Sync(1))
		case "close":
			answer(f.Close(1))
			return
		}
	}
}

// writer is a running TestWriterChild.
type writer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startWriter(t *testing.T, path string) *writer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterChild$")
	cmd.Env = append(os.Environ(), "BLOOMKIT_WRITER_CHILD="+path)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	w := &writer{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	require.Equal(t, "open", w.line(t))
	return w
}

func (w *writer) line(t *testing.T) string {
	t.Helper()
	s, err := w.out.ReadString('\n')
	require.NoError(t, err, "the writer process died")
	return strings.TrimSpace(s)
}

func (w *writer) do(t *testing.T, cmd string) string {
	t.Helper()
	_, err := io.WriteString(w.in, cmd+"\n")
	require.NoError(t, err)
	return w.line(t)
}

// Issue 26 row 1: while `bloomkit add served.bloom` held the file open for
// writing, `bloomkit publish rebuilt.bloom served.bloom` (and `build -o`,
// `union -o`) renamed over it, and the writer's adds went to a file with no
// name while it reported success. Every replace now waits for the writer
// (here up to 200 ms) and refuses with ErrLocked, leaving the served file
// and the folder as they were; a replace that waits long enough goes
// through once the writer closes, with the writer's adds sealed first.
func TestReplaceWaitsForWriter(t *testing.T) {
	dir := t.TempDir()
	served := filepath.Join(dir, "served.bloom")
	sealedFile(t, served, 1)
	rebuilt := filepath.Join(t.TempDir(), "rebuilt.bloom")
	sealedFile(t, rebuilt, 2)
	before, err := os.Stat(served)
	require.NoError(t, err)

	w := startWriter(t, served)
	defer SetReplaceWait(SetReplaceWait(200 * time.Millisecond))
	replaces := map[string]func() error{
		"PublishCopy": func() error { return PublishCopy(rebuilt, served) },
		"Publish": func() error {
			f, err := CreateTemp(served, testHeader())
			require.NoError(t, err)
			return f.Publish(0)
		},
		"Replace": func() error {
			tmp, err := CopyTemp(rebuilt, served)
			require.NoError(t, err)
			defer os.Remove(tmp)
			return Replace(tmp, served)
		},
		"WriteFileAtomic": func() error {
			return WriteFileAtomic(served, func(w io.Writer) error {
				_, err := WriteStream(w, testHeader(), make([]uint64, CellBytes(1000, 1)/8))
				return err
			})
		},
	}
	for name, replace := range replaces {
		start := time.Now()
		err := replace()
		require.ErrorIs(t, err, ErrLocked, name)
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe, name)
		require.Equal(t, served, pe.Path)
		require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "%s waited for the writer", name)
		now, err := os.Stat(served)
		require.NoError(t, err)
		require.True(t, os.SameFile(before, now), "%s left the served file in place", name)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "%s left no temporary file", name)
	}

	// A replace that waits long enough: it goes through after the writer
	// closed, and the writer's Close succeeded on the file at the path.
	SetReplaceWait(20 * time.Second)
	done := make(chan error, 1)
	go func() { done <- PublishCopy(rebuilt, served) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("PublishCopy did not wait for the writer: %v", err)
	default:
	}
	require.Equal(t, "ok", w.do(t, "close"))
	require.NoError(t, <-done)
	require.EqualValues(t, 2, firstWord(t, served))
}

// The other half of row 1: a writer whose file was replaced anyway, by a
// tool that does not wait (mv, cp over a new name, rsync), or removed,
// used to report success. Sync and Close now sync and seal what they hold
// and return ErrReplaced naming the path.
func TestWriterSeesReplace(t *testing.T) {
	dir := t.TempDir()
	served := filepath.Join(dir, "served.bloom")
	sealedFile(t, served, 1)
	w := startWriter(t, served)
	require.Equal(t, "ok", w.do(t, "sync"))
	other := filepath.Join(dir, "other.bloom")
	sealedFile(t, other, 3)
	require.NoError(t, os.Rename(other, served)) // mv other.bloom served.bloom
	got := w.do(t, "sync")
	require.True(t, strings.HasPrefix(got, "replaced "), got)
	require.Contains(t, got, served)
	got = w.do(t, "close")
	require.True(t, strings.HasPrefix(got, "replaced "), got)
	require.EqualValues(t, 3, firstWord(t, served))

	// Removed: the same.
	w = startWriter(t, served)
	require.NoError(t, os.Remove(served))
	got = w.do(t, "close")
	require.True(t, strings.HasPrefix(got, "replaced "), got)
	require.Contains(t, got, "removed")
}

// The flock-on-rename race: a writer opens the path, a replace locks that
// same file and renames a new one over the path before the writer's lock,
// and the writer then locks a file with no name. Open checks, after the
// lock, that the path still names the locked file and opens again if not.
func TestOpenLocksTheFileAtThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bloom")
	sealedFile(t, path, 1)
	newer := filepath.Join(dir, "newer.bloom")
	sealedFile(t, newer, 2)
	openHook = func(string) {
		openHook = nil
		require.NoError(t, Replace(newer, path)) // lands between open and lock
	}
	defer func() { openHook = nil }()
	f, err := Open(path, Standard)
	require.NoError(t, err)
	require.EqualValues(t, 2, f.Words()[0], "the writer holds the file now at the path")
	f.Words()[1] = 9
	require.NoError(t, f.Close(0))
	require.EqualValues(t, 2, firstWord(t, path))
}

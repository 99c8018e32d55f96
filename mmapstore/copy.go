package mmapstore

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// createTemp makes the temporary file for a build of target, beside it
// (in dir, named "."+base+".tmp-*"), locked (see openTemp), with target's
// permission bits, owner and group when it exists (see CreateTemp), else
// 0666 less the umask. It first removes the temporary files of earlier
// builds of target whose writers died (see removeStaleTemps).
func createTemp(dir, base, target string) (*os.File, error) {
	if err := publishTarget(target); err != nil {
		return nil, err
	}
	removeStaleTemps(dir, base) // left by writers killed with SIGKILL
	f, err := openTemp(dir, base)
	if err != nil {
		return nil, fmt.Errorf("mmapstore: create temporary file for %s: %w", target, err)
	}
	if err := takeOwnership(f, target); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("mmapstore: %s: %w", f.Name(), err)
	}
	return f, nil
}

// tempName is a new name for a temporary file of a build of base in dir.
func tempName(dir, base string) string {
	return filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
}

// takeOwnership gives f the permission bits of the file at target, and its
// owner and group as far as this process may; nothing when target does not
// exist.
func takeOwnership(f *os.File, target string) error {
	st, err := os.Stat(target)
	if err != nil {
		return nil // a new target: f keeps the umask's mode
	}
	if err := f.Chmod(st.Mode().Perm()); err != nil {
		return err
	}
	return chownLike(f, st)
}

// CopyTemp copies the file at src into a new temporary file beside target,
// made as CreateTemp makes its file (target's permission bits, owner and
// group, or 0666 less the umask for a new target), and synced. It returns
// the copy's path: for a tool that builds its result by changing a copy (a
// union into a copy of its first input) and then moves it over target with
// Replace. src must be a regular file (ErrNotRegular otherwise). On error
// nothing is left behind.
func CopyTemp(src, target string) (_ string, err error) {
	in, _, err := openRegular(src, os.O_RDONLY)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: src, Err: err}
	}
	defer in.Close()
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	out, err := createTemp(dir, base, target)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return "", fmt.Errorf("mmapstore: copy %s to %s: %w", src, out.Name(), err)
	}
	if err := out.Sync(); err != nil {
		return "", fmt.Errorf("mmapstore: fsync %s: %w", out.Name(), err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("mmapstore: close %s: %w", out.Name(), err)
	}
	return out.Name(), nil
}

// PublishCopy publishes the finished filter file src at dst the safe way:
// it copies src into a temporary file beside dst (made as CreateTemp makes
// its file: dst's mode, owner and group), checks the copy as Open does and
// verifies it against its payload checksum, syncs it, renames it over dst
// and syncs the folder. A process that maps dst (Live, or any reader) keeps
// its old mapping intact and sees the new file at its next open; copying
// over dst in place (cp, truncate) would instead pull the pages from under
// its mapping, and it would die of SIGBUS.
//
// A dst that a writer holds open (a `bloomkit add` in progress) is not
// replaced: PublishCopy waits for the writer to close it (SetReplaceWait)
// and then fails with ErrLocked, as Replace does.
//
// A src that is not a sealed filter file is refused with the typed error
// (ErrNotRegular, ErrBadMagic, ErrTruncated, ErrSparse, ErrPayloadChecksum,
// ErrChecksumStale for a file still open for writing or whose writer
// crashed, ...); dst is then untouched and no temporary file is left.
func PublishCopy(src, dst string) (err error) {
	if _, err := ReadHeader(src); err != nil {
		return err
	}
	tmp, err := CopyTemp(src, dst)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	h, err := ReadHeader(tmp)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	f, err := OpenReadOnly(tmp, h.Variant)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	err = f.Verify()
	if cerr := f.Close(0); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return renameDurably(tmp, dst)
}

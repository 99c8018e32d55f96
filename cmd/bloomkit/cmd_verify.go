package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func verifyCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		path := args[0]
		f, err := openFile(path, true)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Verify(); err != nil {
			return err
		}
		if g, ok := f.(grower); ok {
			// Verify read every record of the history; a missing one
			// verifies for a reader, not for the next add or growth.
			if _, err := os.Stat(g.HistoryPath()); err != nil {
				return missingHistory(path, g.HistoryPath(), err)
			}
			fmt.Fprintf(std.out, "%s: ok\n", path)
			return nil
		}
		note, err := verifyWAL(f, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(std.out, "%s: ok%s\n", path, note)
		return nil
	}
}

// missingHistory is the error of a growing filter whose history log is
// not beside it.
func missingHistory(path, hp string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return &fs.PathError{Op: "verify", Path: hp, Err: fmt.Errorf("%w: the history log of the growing filter %s is missing: the file answers for the keys of its last checkpoint, but cannot take adds or grow (add and serve refuse it); put its history back beside it", err, path)}
}

// walPath is the path of the write-ahead log a server keeps beside the
// filter file at path (a link's target's, as the server names it).
func walPath(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		path = t
	}
	return path + ".log"
}

// verifyWAL checks every record of the write-ahead log beside the fixed
// filter f at path when there is one (a served file's adds since its last
// checkpoint), as the server's next open of the key reads it, and returns
// what to say of it after "ok" ("" when there is none).
func verifyWAL(f bloomkit.Filter, path string) (string, error) {
	lp := walPath(path)
	if _, err := os.Lstat(lp); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	rep, err := mmapstore.CheckLog(lp)
	if err != nil {
		return "", fmt.Errorf("%w (its adds since the last checkpoint: 'bloomkit repair-log %s' cuts the log at the last intact record)", err, path)
	}
	if rep.Info.Scheme != f.Scheme() || rep.Info.Seed != f.Seed() {
		return "", &fs.PathError{Op: "verify", Path: lp, Err: fmt.Errorf("%w: the write-ahead log's digests are of another hashing (scheme %d, seed %d) than the filter's (scheme %d, seed %d): they cannot be added to it",
			mmapstore.ErrLogCorrupt, rep.Info.Scheme, rep.Info.Seed, f.Scheme(), f.Seed())}
	}
	note := fmt.Sprintf("; write-ahead log %s: %d digests in %d records, every record intact", lp, rep.Digests, rep.Records)
	if rep.Torn {
		note += fmt.Sprintf(", then a torn tail of %d bytes (a write cut by a crash, left out)", rep.Dropped())
	}
	return note, nil
}

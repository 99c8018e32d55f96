package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// verifyLimit is the largest file that test and info check against its
// payload checksum before they answer, unless -verify or -no-verify says
// otherwise. The check reads the whole payload: O(size), measured in the
// README's shell recipes.
const verifyLimit = 64 << 20

// verifyFlags choose whether a command reading a filter checks its
// payload checksum first.
type verifyFlags struct{ always, never bool }

func (vf *verifyFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&vf.always, "verify", false,
		"check the payload checksum first whatever the file's size (reads the whole file: O(size)); refuse a file whose checksum is not current")
	fs.BoolVar(&vf.never, "no-verify", false,
		"do not check the payload checksum (by default files up to 64 MiB are checked, larger ones get a warning)")
}

// payloadState is what a command knows of a filter's payload.
type payloadState int

const (
	payloadVerified  payloadState = iota // it matches its checksum
	payloadStale                         // the checksum is not current: it cannot be checked
	payloadUnchecked                     // larger than verifyLimit: not checked
	payloadSkipped                       // -no-verify
	// payloadHistoryDamaged: the payload matches its checksum, and the
	// history log of the growing filter is damaged (its adds and growth
	// are refused; its lookups answer from the snapshot, which holds
	// every key the history's damaged part does).
	payloadHistoryDamaged
)

// check checks f, opened from path, against its payload checksum as the
// flags say. A damaged payload is an error: no answer from it.
func (vf verifyFlags) check(f bloomkit.Filter, path string) (payloadState, error) {
	if vf.always && vf.never {
		return 0, fmt.Errorf("-verify and -no-verify exclude each other")
	}
	if vf.never {
		return payloadSkipped, nil
	}
	if !vf.always {
		st, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		if st.Size() > verifyLimit {
			return payloadUnchecked, nil
		}
	}
	err := f.Verify()
	switch {
	case err == nil:
		return payloadVerified, nil
	case errors.Is(err, mmapstore.ErrChecksumStale) && !vf.always:
		return payloadStale, nil
	case errors.Is(err, mmapstore.ErrChecksumStale):
		return 0, fmt.Errorf("%w: -verify cannot check a file open for writing or not closed cleanly", err)
	case errors.Is(err, mmapstore.ErrLogCorrupt):
		// The snapshot, checked first, is whole; the history is read
		// only by adds and growth (and by this open past the snapshot's
		// part, which succeeded).
		return payloadHistoryDamaged, nil
	case errors.Is(err, mmapstore.ErrPayloadChecksum):
		return 0, fmt.Errorf("%w: the file is damaged and its answers would be wrong (rebuild it; -no-verify answers anyway)", err)
	default:
		return 0, err
	}
}

// warning is the line a command prints on stderr before answering from
// the file in this state, or "".
func (s payloadState) warning(path string) string {
	switch s {
	case payloadStale:
		return path + ": checksum not current (open for writing, or not closed cleanly): answers not checked"
	case payloadUnchecked:
		return path + ": larger than 64 MiB, not checked against its checksum (-verify checks it, reading the whole file; -no-verify silences this)"
	case payloadHistoryDamaged:
		return path + ": its history log is damaged ('bloomkit verify' says where): answers come from the snapshot, checked; adds and growth are refused"
	}
	return ""
}

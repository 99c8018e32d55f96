package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// publishCommand publishes a finished filter file over a served one: it
// copies SRC into a temporary file beside DST (DST's mode and owner),
// verifies the copy against its payload checksum, and renames it over DST.
// A DST that is a folder receives SRC under its own name. A DST holding a
// filter of another variant is refused unless -force: its readers would
// get another kind of filter (a fuse filter takes no adds, and a program
// that opens DST as the old variant refuses the new one; bloomkit serve
// takes either). A signal during the
// copy or the check removes the temporary file and leaves DST as it was.
func publishCommand(flags *flag.FlagSet, std stdio) func([]string) error {
	force := flags.Bool("force", false, "publish over a filter file of another variant (a program that opens DST as the old variant then refuses it)")
	return func(args []string) (err error) {
		if len(args) != 2 {
			return fmt.Errorf("want SRC and DST, got %d arguments", len(args))
		}
		src, dst := args[0], args[1]
		if st, err := os.Stat(dst); err == nil && st.IsDir() {
			dst = filepath.Join(dst, filepath.Base(src))
		}
		sh, err := mmapstore.ReadHeader(src)
		if err != nil {
			return err
		}
		if err := checkPublishTarget(src, dst, sh, *force); err != nil {
			return err
		}
		if err := interrupted(); err != nil {
			return err
		}
		tmp, err := mmapstore.CopyTemp(src, dst)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(tmp)
			}
		}()
		if err := interrupted(); err != nil {
			return err
		}
		if err := verifyCopy(tmp); err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		if err := interrupted(); err != nil {
			return err
		}
		return mmapstore.Replace(tmp, dst)
	}
}

// checkPublishTarget refuses to publish a filter of src's header over a
// filter file of another variant at dst, unless force. A dst that is not a
// filter file (missing, or damaged) is no obstacle.
func checkPublishTarget(src, dst string, sh mmapstore.Header, force bool) error {
	if st, err := os.Stat(dst); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file or a folder", dst)
	}
	if sh.HasHistory() {
		return fmt.Errorf("%s is a %s filter: it is two files, %s and its history %s, and publish copies one (a copy without its history opens nowhere); copy both while no writer has them open", src, sh.Variant, src, src+".log")
	}
	return checkVariantTarget(src, sh.Variant, dst, force)
}

// checkGrowingWriter refuses to replace dst when it is a growing filter
// that a writer (add, dedup -state) has open: such a writer holds the lock
// of its history, not of dst, and writes its table over dst when it
// closes, which would undo the publish after it reported success.
func checkGrowingWriter(dst string) error {
	if dh, err := mmapstore.ReadHeader(dst); err != nil || !dh.HasHistory() {
		return nil
	}
	l, err := mmapstore.OpenLog(dst + ".log")
	if errors.Is(err, mmapstore.ErrLocked) {
		return fmt.Errorf("%s is a growing filter that a writer has open (add, dedup -state): it would write its table over the published file when it closes; nothing was replaced", dst)
	}
	if err == nil {
		return l.Close()
	}
	return nil
}

// checkVariantTarget refuses to replace dst, a filter file of another
// variant than tag, with what (a file, or the filter a command writes),
// unless force: publish, build -o and union -o alike; nor a growing dst
// that a writer has open (checkGrowingWriter). A dst that is not a
// filter file (missing, or damaged) is no obstacle: replacing it is what a
// good build is for.
func checkVariantTarget(what string, tag mmapstore.Variant, dst string, force bool) error {
	dh, err := mmapstore.ReadHeader(dst)
	if err != nil {
		return nil
	}
	if force || dh.Variant == tag {
		return checkGrowingWriter(dst)
	}
	return fmt.Errorf("%s is a %s filter and %s a %s one: its readers would get another kind of filter, and a program that opens it as a %s filter refuses it (-force replaces it anyway)",
		what, tag, dst, dh.Variant, dh.Variant)
}

// verifyCopy checks the copy at path as Open does and against its payload
// checksum; a file still open for writing (checksum not current) fails.
func verifyCopy(path string) error {
	f, err := openFile(path, true)
	if err != nil {
		return err
	}
	err = f.Verify()
	return errors.Join(err, f.Close())
}

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// Keys. add, test and remove take their keys one way: keys as arguments
// after FILE, key files (one key a line, gzip recognised) with -f FILE,
// repeatable, "-" naming stdin, and the lines of stdin when neither is
// given. Arguments and -f files may be mixed: the arguments come first.

// keyFilesUsage is the -f flag's help, the same for every command.
const keyFilesUsage = "read keys from `FILE`, one a line (repeatable; - is stdin; gzip is recognised); without -f and key arguments, keys are read from stdin"

// keyFlags are the flags that say where keys come from.
type keyFlags struct {
	files   stringsFlag
	maxLine *int
}

func (kf *keyFlags) define(fs *flag.FlagSet) {
	fs.Var(&kf.files, "f", keyFilesUsage)
	kf.maxLine = fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
}

// stringsFlag is a flag given any number of times.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }

func (s *stringsFlag) Set(v string) error {
	if v == "" {
		return fmt.Errorf("want a file name (- for stdin)")
	}
	*s = append(*s, v)
	return nil
}

// each calls fn with every key: each argument in keys, then each line of
// the -f files, or each line of stdin when there are neither. cmd names the
// command in the warning printed (once) for a key argument that names an
// existing file: before the -f convention, add read such an argument as a
// key file.
func (kf *keyFlags) each(std stdio, cmd string, keys []string, label string, fn func([]byte) error) error {
	for _, k := range keys {
		if st, err := os.Stat(k); err == nil && st.Mode().IsRegular() {
			fmt.Fprintf(std.err, "bloomkit %s: warning: the key %q is also the name of a file; it is used as a key (keys from a file: -f %s)\n", cmd, k, k)
			break
		}
	}
	for _, k := range keys {
		if err := interrupted(); err != nil {
			return err
		}
		if err := fn([]byte(k)); err != nil {
			return err
		}
	}
	if len(kf.files) == 0 && len(keys) > 0 {
		return nil
	}
	return kf.source(std, label).each(fn)
}

// source is the line source of the -f files (stdin when there are none).
func (kf *keyFlags) source(std stdio, label string) *lineSource {
	return std.lineSource([]string(kf.files), *kf.maxLine, label)
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// runMain is `soak run`: generate N 16-byte keys to a file, build a
// partitioned filter of them from the file and from <(zcat file.gz), and
// check with test -absent that every key is present; each step's keys/s,
// peak RSS and CPU use are printed.
func runMain(args []string) error {
	fs := flag.NewFlagSet("soak run", flag.ContinueOnError)
	n := fs.String("n", "1e8", "number of keys")
	dir := fs.String("dir", "", "folder for the key files and filters (needs about 17 bytes a key, plus the .gz)")
	bk := fs.String("bloomkit", "bloomkit", "the bloomkit binary")
	p := fs.String("p", "0.01", "target false-positive rate")
	keep := fs.Bool("keep", false, "keep the key files and filters")
	readers := fs.Int("readers", 8, "goroutines of lookups through mmapstore.Live in the serving phase")
	publishes := fs.Int("publishes", 2, "rebuilds published over the served filter in the serving phase (0: no serving phase)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	count, err := parseCount(*n)
	if err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if *readers < 1 || *publishes < 0 {
		return fmt.Errorf("-readers must be at least 1 and -publishes at least 0")
	}
	// Ctrl-C or a kill ends the run like a failed step: the step's command
	// is stopped and the files are removed (the deferred removes run).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	keys := filepath.Join(*dir, "soak-keys.txt")
	gz := keys + ".gz"
	out := filepath.Join(*dir, "soak.bloom")
	if !*keep {
		defer os.Remove(keys)
		defer os.Remove(gz)
		defer os.Remove(out)
	}
	start := time.Now()
	if err := genFile(ctx, keys, count); err != nil {
		return err
	}
	fmt.Printf("generated %d keys in %.1f s\n", count, time.Since(start).Seconds())
	steps := []struct {
		name string
		cmd  string
		want int // exit status
	}{
		{"build from the file", fmt.Sprintf("%q build -variant partitioned -n %d -p %s -o %q %q", *bk, count, *p, out, keys), 0},
		{"test -absent of every key", fmt.Sprintf("%q test -absent %q -f %q", *bk, out, keys), 1},
		{"gzip -1 (not timed as bloomkit)", fmt.Sprintf("gzip -1 -c %q > %q", keys, gz), 0},
		{"zcat alone", fmt.Sprintf("zcat %q > /dev/null", gz), 0},
		{"build from <(zcat)", fmt.Sprintf("%q build -variant partitioned -n %d -p %s -o %q <(zcat %q)", *bk, count, *p, out, gz), 0},
		{"test -absent of every key", fmt.Sprintf("%q test -absent %q -f %q", *bk, out, keys), 1},
	}
	for _, s := range steps {
		if err := step(ctx, s.name, s.cmd, s.want, count); err != nil {
			return err
		}
	}
	if *publishes == 0 {
		return nil
	}
	rebuild := fmt.Sprintf("%q build -variant partitioned -n %d -p %s -o %q %q", *bk, count, *p, out, keys)
	return serveStep(serveConfig{
		ctx:    ctx,
		filter: out, n: count, readers: *readers, publishes: *publishes,
		rebuild: func(pub int) error {
			return step(ctx, fmt.Sprintf("rebuild %d while serving", pub), rebuild, 0, count)
		},
		poll: 100 * time.Millisecond, swapWait: time.Minute,
	})
}

// serveStep runs the serving phase on the filter built last and prints its
// figures and this process's peak RSS (the served mappings, two of them
// around a swap, and the runtime).
func serveStep(cfg serveConfig) error {
	fmt.Printf("serving: %d readers through mmapstore.Live while the filter is rebuilt and published %d times\n", cfg.readers, cfg.publishes)
	res, err := serve(cfg, os.Stdout)
	if err != nil {
		return err
	}
	if err := cfg.ctx.Err(); err != nil {
		return fmt.Errorf("serving: interrupted: %w", context.Cause(cfg.ctx))
	}
	fmt.Printf("serving: %s, peak RSS of the serving process %.0f MiB\n", res, peakRSS())
	return res.check(cfg.publishes)
}

// genFile writes count key16 lines to path, or stops when ctx is done.
func genFile(ctx context.Context, path string, count uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := generate(ctx, f, "key16", count); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// step runs cmd with bash, checks its exit status, and prints its wall
// time, keys/s, CPU use (user+system over wall) and peak RSS. test -absent
// exits 1 when it prints no key: zero false negatives. cmd runs in a
// process group of its own, which gets SIGTERM when ctx is done (bash
// would not pass a signal on to the bloomkit and zcat it runs).
func step(ctx context.Context, name, cmd string, want int, count uint64) error {
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	c.WaitDelay = time.Minute
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	wall := time.Since(start).Seconds()
	if ctx.Err() != nil {
		return fmt.Errorf("%s: interrupted: %w", name, errors.Join(context.Cause(ctx), err))
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if code != want {
		return fmt.Errorf("%s: exit status %d, want %d\n%s%s", name, code, want, head(stdout.Bytes()), stderr.Bytes())
	}
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	fmt.Printf("%-34s %8.2f s  %7.2f Mkeys/s  CPU %4.0f%%  peak RSS %6.0f MiB  (%s)\n",
		name, wall, float64(count)/wall/1e6, 100*cpu/wall, float64(ru.Maxrss)/1024, cmd)
	if out := bytes.TrimSpace(stdout.Bytes()); len(out) > 0 && want == 0 {
		fmt.Printf("    %s\n", out)
	}
	return nil
}

// head is the first 10 lines of b.
func head(b []byte) []byte {
	for i, n := 0, 0; i < len(b); i++ {
		if b[i] == '\n' {
			if n++; n == 10 {
				return b[:i+1]
			}
		}
	}
	return b
}

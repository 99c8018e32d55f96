// Command firstanswer times a server's restart: it starts the command after
// "--", polls addr with BF.EXISTS key item every -poll until the answer is
// -want, prints the seconds from the start to that answer and the server's
// process id, and exits leaving the server running (the caller stops it).
//
//	firstanswer -addr 127.0.0.1:6379 -key big -item probe -- bloomkit serve -dir DIR
//	firstanswer -count-log DIR/big.bloom.log
//
// -count-log prints the digests a digest log (mmapstore.Log) holds, read
// through mmapstore.ReadLog, and exits. Used by speed-vs-redisbloom.sh (docs/serve.md, "Benchmarks against RedisBloom",).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "firstanswer:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("firstanswer", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:6379", "address the server listens on")
	key := fs.String("key", "", "key to ask")
	item := fs.String("item", "", "item to ask (one added last, so the answer needs the whole log)")
	want := fs.String("want", "1", "the answer that counts (an integer reply)")
	poll := fs.Duration("poll", time.Millisecond, "time between tries")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	stdout := fs.String("stdout", os.DevNull, "file for the server's stdout")
	stderr := fs.String("stderr", os.DevNull, "file for the server's stderr")
	countLog := fs.String("count-log", "", "print the digests in this digest log and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *countLog != "" {
		var n uint64
		li, err := mmapstore.ReadLog(*countLog, func(ds []bloomkit.Digest) error {
			n += uint64(len(ds))
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "digests=%d base=%d\n", n, li.Base)
		return nil
	}
	if fs.NArg() == 0 || *key == "" || *item == "" {
		return errors.New("usage: firstanswer -addr A -key K -item I [-want 1] -- COMMAND [ARGS...]")
	}
	so, err := os.OpenFile(*stdout, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer so.Close()
	se, err := os.OpenFile(*stderr, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer se.Close()
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdout, cmd.Stderr = so, se
	exited := make(chan error, 1)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { exited <- cmd.Wait() }()
	req := fmt.Sprintf("*3\r\n$9\r\nBF.EXISTS\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(*key), *key, len(*item), *item)
	last := ""
	for {
		if reply, err := ask(*addr, req); err == nil {
			last = reply
			if reply == ":"+*want {
				fmt.Fprintf(out, "first_answer_s=%.4f pid=%d\n", time.Since(t0).Seconds(), cmd.Process.Pid)
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the server exited before answering %s: %v (last reply %q)", *want, err, last)
		case <-time.After(*poll):
		}
		if time.Since(t0) > *timeout {
			cmd.Process.Kill()
			return fmt.Errorf("no answer %s within %v (last reply %q)", *want, *timeout, last)
		}
	}
}

// ask sends one request on a new connection and returns the reply's first
// line ("-LOADING ..." while Redis loads, ":1" when it answers).
func ask(addr, req string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

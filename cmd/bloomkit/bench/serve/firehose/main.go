// Command firehose is a light load generator for BF.EXISTS: -c
// connections each send pipelines of -P lookups of random items out of
// the 12-digit items 0..-r-1 (the ones speed-vs-redisbloom.sh adds), prepared before
// the run, and read back their replies, checking each is an integer (RESP2
// ":0" or ":1"), until -n lookups were answered. It prints the lookups a
// second and the hits.
//
//	firehose -addr 127.0.0.1:6379 -key hits100000 -r 100000 -c 50 -P 16 -n 2000000
//
// redis-benchmark parses every reply and builds every request during the
// run: on a 2-core machine it takes a whole core at 0.5-0.8 M requests/s
// and is what limits the measurement. On Linux firehose drives its
// connections from -loops event loops (epoll, one thread each, as Redis
// serves them): a read and a write a pipeline, so at -P 16 it costs the
// server's machine a small share of a core per million lookups a second.
// speed-vs-redisbloom.sh prints that share beside every figure it takes with it.
// Elsewhere it runs a goroutine a connection.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "firehose:", err)
		os.Exit(2)
	}
}

// buffers is how many different pipelines each connection cycles through.
const buffers = 64

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("firehose", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:6379", "server address")
	key := fs.String("key", "", "the filter's key")
	keyRange := fs.Int("r", 100000, "items are the 12-digit numbers 0..r-1")
	conns := fs.Int("c", 50, "connections")
	depth := fs.Int("P", 16, "lookups pipelined a connection")
	total := fs.Int64("n", 2000000, "lookups in all")
	loops := fs.Int("loops", 1, "event loops (threads) driving the connections, Linux; 0: a goroutine a connection")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" || *keyRange < 1 || *conns < 1 || *depth < 1 || *total < 1 {
		return errors.New("need -key, and -r, -c, -P, -n of at least 1")
	}
	var left atomic.Int64
	left.Store(*total)
	bufs := make([][][]byte, *conns)
	for i := range bufs {
		bufs[i] = pipelines(*key, *keyRange, *depth, uint64(i))
	}
	var hits, answered int64
	var took time.Duration
	var err error
	if *loops > 0 && haveLoops {
		hits, answered, took, err = runLoops(*addr, bufs, *depth, &left, *loops)
	} else {
		hits, answered, took, err = runGoroutines(*addr, bufs, *depth, &left)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%.0f requests/s, %d lookups, %d hits, %.3f s\n", float64(answered)/took.Seconds(), answered, hits, took.Seconds())
	return nil
}

// pipelines prepares the connection's requests: buffers pipelines of depth
// BF.EXISTS commands each.
func pipelines(key string, keyRange, depth int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([][]byte, buffers)
	for i := range out {
		var b []byte
		for range depth {
			item := fmt.Sprintf("%012d", rng.IntN(keyRange))
			b = fmt.Appendf(b, "*3\r\n$9\r\nBF.EXISTS\r\n$%d\r\n%s\r\n$12\r\n%s\r\n", len(key), key, item)
		}
		out[i] = b
	}
	return out
}

// runGoroutines drives each connection from a goroutine of its own.
func runGoroutines(addr string, bufs [][][]byte, depth int, left *atomic.Int64) (hits, answered int64, took time.Duration, err error) {
	var h, n atomic.Int64
	errs := make(chan error, len(bufs))
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	for i := range bufs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, 0, 0, err
		}
		defer c.Close()
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			<-start
			ch, cn, err := drive(c, bufs[i], depth, left)
			h.Add(ch)
			n.Add(cn)
			errs <- err
		}()
	}
	ready.Wait()
	began := time.Now()
	close(start)
	wg.Wait()
	took = time.Since(began)
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, 0, 0, err
		}
	}
	return h.Load(), n.Load(), took, nil
}

// drive sends pipelines until the shared budget left runs out, reading
// each pipeline's replies before the next; it returns the hits and the
// lookups answered.
func drive(c net.Conn, bufs [][]byte, depth int, left *atomic.Int64) (hits, answered int64, err error) {
	rd := bufio.NewReaderSize(c, 64<<10)
	for i := 0; left.Add(-int64(depth)) > -int64(depth); i++ {
		if _, err := c.Write(bufs[i%len(bufs)]); err != nil {
			return hits, answered, err
		}
		for range depth {
			line, err := rd.ReadSlice('\n')
			if err != nil {
				return hits, answered, err
			}
			if len(line) < 4 || line[0] != ':' {
				return hits, answered, fmt.Errorf("reply %q is not an integer", line)
			}
			v, err := strconv.Atoi(string(line[1 : len(line)-2]))
			if err != nil {
				return hits, answered, fmt.Errorf("reply %q: %w", line, err)
			}
			hits += int64(v)
			answered++
		}
	}
	return hits, answered, nil
}

// Command growth measures issue 33's growth targets on a RedisBloom-compatible
// server (bloomkit serve or redis-server with RedisBloom): it BF.MADDs n
// distinct items, 1,000 a call, into a key nobody reserved, and at each
// doubling of the item count from 100 (and one item after it) records:
//
//   - bits per item: max(BF.INFO Size, the bytes of the key's files in -dir,
//     the log excluded and reported) × 8 / items;
//   - the false-positive rate on a fixed set of never-added items (-fp-points
//     of them at each point, -fp-final at the end);
//   - false negatives on a sample of the added items (-fn-sample at each point,
//     every added item when fewer);
//
// and after every call the largest bits per item seen so far. At the end it
// measures BF.MEXISTS of never-added items in items/s over -conns connections,
// each with -pipeline calls of -mexists-batch items in flight.
//
//	growth run -addr 127.0.0.1:6379 -dir DIR -name bloomkit -json bk.json
//	growth report -bloomkit bk.json -redisbloom rb.json
//
// Added items are "item:<i>", never-added ones "never:<i>" (i from 0): the
// same keys on every server. docs/serve.md, "Benchmarks against RedisBloom", tells how to read the output.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "growth:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: growth run|report [flags] (-h for each)")
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], out)
	case "report":
		return reportCommand(args[1:], out)
	default:
		return fmt.Errorf("unknown command %q: want run or report", args[0])
	}
}

// Config is what one run measures.
type Config struct {
	Name          string  `json:"name"`
	Addr          string  `json:"addr"`
	Password      string  `json:"-"`
	Key           string  `json:"key"`
	Dir           string  `json:"dir"`
	N             int     `json:"n"`
	Batch         int     `json:"batch"`
	Start         int     `json:"start"`
	FPPoints      int     `json:"fp_points"`
	FPFinal       int     `json:"fp_final"`
	FNSample      int     `json:"fn_sample"`
	FNFinal       int     `json:"fn_final"`
	Conns         int     `json:"conns"`
	Pipeline      int     `json:"pipeline"`
	MExistsBatch  int     `json:"mexists_batch"`
	MExistsTime   float64 `json:"mexists_seconds"`
	TargetRate    float64 `json:"target_rate"`
	MaxBitsAll    float64 `json:"target_bits_every_point"`
	MaxBitsFinal  float64 `json:"target_bits_final"`
	MExistsFactor float64 `json:"target_mexists_factor"`
}

// Point is one measurement during the growth.
type Point struct {
	Items     int     `json:"items"`
	After     bool    `json:"after"` // one item after a doubling
	InfoSize  int64   `json:"info_size"`
	Filters   int64   `json:"filters"`
	FileBytes int64   `json:"file_bytes"`
	LogBytes  int64   `json:"log_bytes"`
	TmpBytes  int64   `json:"tmp_bytes"`
	Bits      float64 `json:"bits_per_item"`
	FPChecked int     `json:"fp_checked"`
	FPHits    int     `json:"fp_hits"`
	FPRate    float64 `json:"fp_rate"`
	FNChecked int     `json:"fn_checked"`
	FNMissed  int     `json:"fn_missed"`
}

// Result is a run's output (-json).
type Result struct {
	Config      Config  `json:"config"`
	Points      []Point `json:"points"`
	Final       Point   `json:"final"`
	MaxBitsCall float64 `json:"max_bits_any_call"`
	MaxBitsAt   int     `json:"max_bits_any_call_items"`
	AddSeconds  float64 `json:"add_seconds"`
	MExists     struct {
		Items   int64   `json:"items"`
		Seconds float64 `json:"seconds"`
		Rate    float64 `json:"items_per_s"`
		Hits    int64   `json:"hits"`
	} `json:"mexists"`
}

func runCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("growth run", flag.ContinueOnError)
	var c Config
	var jsonPath string
	var n float64
	fs.StringVar(&c.Name, "name", "server", "name of the server in the output")
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:6379", "server address")
	fs.StringVar(&c.Password, "password", os.Getenv("GROWTH_PASSWORD"), "AUTH password (or $GROWTH_PASSWORD)")
	fs.StringVar(&c.Key, "key", "grown", "key to add to; it must not exist (never reserved)")
	fs.StringVar(&c.Dir, "dir", "", "the server's folder of filter files (bloomkit serve's -dir), to count the key's files; empty: BF.INFO Size only")
	fs.Float64Var(&n, "n", 1e7, "distinct items to add")
	fs.IntVar(&c.Batch, "batch", 1000, "items per BF.MADD")
	fs.IntVar(&c.Start, "start", 100, "first measurement point; the next ones double it")
	fs.IntVar(&c.FPPoints, "fp-points", 100000, "never-added items checked at each intermediate point")
	fs.IntVar(&c.FPFinal, "fp-final", 1000000, "never-added items checked at the end")
	fs.IntVar(&c.FNSample, "fn-sample", 10000, "added items checked at each point (evenly spaced; all when fewer)")
	fs.IntVar(&c.FNFinal, "fn-final", 100000, "added items checked at the end")
	fs.IntVar(&c.Conns, "conns", 8, "connections for the BF.MEXISTS rate")
	fs.IntVar(&c.Pipeline, "pipeline", 16, "BF.MEXISTS calls in flight per connection")
	fs.IntVar(&c.MExistsBatch, "mexists-batch", 1000, "items per BF.MEXISTS")
	fs.Float64Var(&c.MExistsTime, "mexists-seconds", 5, "how long to measure BF.MEXISTS")
	fs.Float64Var(&c.TargetRate, "target-rate", 0.01, "the key's false-positive target (the server's default error rate)")
	fs.Float64Var(&c.MaxBitsAll, "target-bits-every-point", 24, "bits per item target at every point")
	fs.Float64Var(&c.MaxBitsFinal, "target-bits-final", 16, "bits per item target at the end")
	fs.Float64Var(&c.MExistsFactor, "target-mexists", 2, "BF.MEXISTS target, times RedisBloom's items/s")
	fs.StringVar(&jsonPath, "json", "", "write the result as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.N = int(n)
	if c.N < 1 || c.Batch < 1 || c.Start < 1 || c.Conns < 1 || c.Pipeline < 1 || c.MExistsBatch < 1 || c.MExistsTime <= 0 {
		return errors.New("-n, -batch, -start, -conns, -pipeline, -mexists-batch and -mexists-seconds must be positive")
	}
	if c.FPPoints < 0 || c.FPFinal < 1 || c.FNSample < 0 || c.FNFinal < 1 {
		return errors.New("-fp-points and -fn-sample must be ≥ 0, -fp-final and -fn-final ≥ 1")
	}
	res, err := Measure(context.Background(), c, out)
	if err != nil {
		return err
	}
	if jsonPath != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(jsonPath, append(b, '\n'), 0o644)
	}
	return nil
}

func itemName(i int) string  { return "item:" + strconv.Itoa(i) }
func neverName(i int) string { return "never:" + strconv.Itoa(i) }

// Measure runs the growth on c.Addr, printing each point to out.
func Measure(ctx context.Context, c Config, out io.Writer) (*Result, error) {
	cl := redis.NewClient(&redis.Options{Addr: c.Addr, Password: c.Password, PoolSize: c.Conns + 1,
		Protocol: 2, ReadTimeout: time.Minute, WriteTimeout: time.Minute, DisableIdentity: true})
	defer cl.Close()
	if n, err := cl.Exists(ctx, c.Key).Result(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Addr, err)
	} else if n != 0 {
		return nil, fmt.Errorf("%s: key %q exists: the growth starts from a key nobody reserved (DEL it or pick another -key)", c.Addr, c.Key)
	}
	res := &Result{Config: c}
	var targets []int // measurement points, ascending: each doubling and one item after it
	for p := c.Start; p < c.N; p *= 2 {
		targets = append(targets, p, p+1)
	}
	fmt.Fprintf(out, "# %s %s: %d items into %q, %d a call; points at %d·2^k and one item after\n",
		c.Name, c.Addr, c.N, c.Key, c.Batch, c.Start)
	fmt.Fprintf(out, "%10s %6s %12s %12s %10s %8s %9s %10s %8s %6s\n",
		"items", "", "info_size", "file_bytes", "log_bytes", "filters", "bits/item", "fp_rate", "fp_n", "fn")
	added := 0
	args := make([]any, 0, c.Batch+2)
	var addTime time.Duration
	next := 0
	for added < c.N {
		stop := c.N
		if next < len(targets) && targets[next] < stop {
			stop = targets[next]
		}
		for added < stop {
			k := min(c.Batch, stop-added)
			args = append(args[:0], "BF.MADD", c.Key)
			for i := added; i < added+k; i++ {
				args = append(args, itemName(i))
			}
			t0 := time.Now()
			if err := cl.Do(ctx, args...).Err(); err != nil {
				return nil, fmt.Errorf("BF.MADD at item %d: %w", added, err)
			}
			addTime += time.Since(t0)
			added += k
			size, err := measureSize(ctx, cl, c)
			if err != nil {
				return nil, err
			}
			if b := float64(size) * 8 / float64(added); b > res.MaxBitsCall {
				res.MaxBitsCall, res.MaxBitsAt = b, added
			}
		}
		final := added == c.N
		fp, fn := c.FPPoints, c.FNSample
		if final {
			fp, fn = c.FPFinal, c.FNFinal
		}
		pt, err := measurePoint(ctx, cl, c, added, fp, fn)
		if err != nil {
			return nil, err
		}
		pt.After = !final && next%2 == 1
		printPoint(out, pt, final)
		if final {
			res.Final = pt
		} else {
			res.Points = append(res.Points, pt)
			next++
		}
	}
	res.AddSeconds = addTime.Seconds()
	items, hits, secs, err := mexistsRate(ctx, cl, c)
	if err != nil {
		return nil, err
	}
	res.MExists.Items, res.MExists.Hits, res.MExists.Seconds = items, hits, secs
	res.MExists.Rate = float64(items) / secs
	fmt.Fprintf(out, "# BF.MADD: %d items in %.2f s of calls (%.0f items/s, one connection, unpipelined)\n",
		c.N, res.AddSeconds, float64(c.N)/res.AddSeconds)
	fmt.Fprintf(out, "# largest bits/item after any call: %.2f at %d items\n", res.MaxBitsCall, res.MaxBitsAt)
	fmt.Fprintf(out, "# BF.MEXISTS of never-added items: %.0f items/s (%d conns × %d pipelined × %d items, %.1f s; %d answered 1)\n",
		res.MExists.Rate, c.Conns, c.Pipeline, c.MExistsBatch, secs, hits)
	return res, nil
}

func printPoint(out io.Writer, p Point, final bool) {
	tag := ""
	if p.After {
		tag = "+1"
	}
	if final {
		tag = "end"
	}
	fmt.Fprintf(out, "%10d %6s %12d %12d %10d %8d %9.2f %9.4f%% %8d %6d\n",
		p.Items, tag, p.InfoSize, p.FileBytes, p.LogBytes, p.Filters, p.Bits, 100*p.FPRate, p.FPChecked, p.FNMissed)
}

// measureSize returns max(BF.INFO Size, the key's files).
func measureSize(ctx context.Context, cl *redis.Client, c Config) (int64, error) {
	info, err := infoField(ctx, cl, c.Key, "SIZE")
	if err != nil {
		return 0, err
	}
	files, _, _, err := keyFiles(c.Dir, c.Key)
	if err != nil {
		return 0, err
	}
	return max(info, files), nil
}

func measurePoint(ctx context.Context, cl *redis.Client, c Config, added, fp, fn int) (Point, error) {
	p := Point{Items: added}
	var err error
	if p.InfoSize, err = infoField(ctx, cl, c.Key, "SIZE"); err != nil {
		return p, err
	}
	if p.Filters, err = infoField(ctx, cl, c.Key, "FILTERS"); err != nil {
		return p, err
	}
	if p.FileBytes, p.LogBytes, p.TmpBytes, err = keyFiles(c.Dir, c.Key); err != nil {
		return p, err
	}
	p.Bits = float64(max(p.InfoSize, p.FileBytes)) * 8 / float64(added)
	hits, err := countOnes(ctx, cl, c.Key, fp, neverName)
	if err != nil {
		return p, err
	}
	p.FPChecked, p.FPHits, p.FPRate = fp, hits, float64(hits)/float64(max(fp, 1))
	// Added items evenly spaced over [0, added): all of them when fewer.
	sample := min(fn, added)
	ones, err := countOnes(ctx, cl, c.Key, sample, func(i int) string {
		return itemName(int(int64(i) * int64(added) / int64(sample)))
	})
	if err != nil {
		return p, err
	}
	p.FNChecked, p.FNMissed = sample, sample-ones
	return p, nil
}

// infoField returns an integer field of BF.INFO key FIELD (RedisBloom
// answers a one-element array, or the bare integer).
func infoField(ctx context.Context, cl *redis.Client, key, field string) (int64, error) {
	v, err := cl.Do(ctx, "BF.INFO", key, field).Result()
	if err != nil {
		return 0, fmt.Errorf("BF.INFO %s %s: %w", key, field, err)
	}
	if a, ok := v.([]any); ok && len(a) == 1 {
		v = a[0]
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("BF.INFO %s %s: not an integer: %v", key, field, v)
	}
	return n, nil
}

// keyFiles sums the sizes of the key's files in dir: NAME.bloom and
// NAME.bloom.* (a file's allocated bytes when they are more than its length),
// with NAME.bloom*.log apart (the log, excluded from bits per item) and the
// hidden temporaries .NAME.bloom* (a rebuild or publish in flight) apart.
func keyFiles(dir, key string) (files, logs, tmps int64, err error) {
	if dir == "" {
		return 0, 0, 0, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	base := key + ".bloom"
	for _, e := range ents {
		name := e.Name()
		hidden := strings.HasPrefix(name, "."+base)
		if name != base && !strings.HasPrefix(name, base+".") && !hidden {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the listing (a temporary renamed)
		} else if err != nil {
			return 0, 0, 0, err
		}
		n := max(fi.Size(), allocated(fi))
		switch {
		case hidden:
			tmps += n
		case strings.HasSuffix(name, ".log"):
			logs += n
		default:
			files += n
		}
	}
	return files, logs, tmps, nil
}

// countOnes asks BF.MEXISTS for name(0..n-1), 1,000 a call, 16 calls in
// flight, and returns how many answered 1.
func countOnes(ctx context.Context, cl *redis.Client, key string, n int, name func(int) string) (int, error) {
	const batch, depth = 1000, 16
	ones := 0
	for lo := 0; lo < n; {
		pipe := cl.Pipeline()
		var cmds []*redis.Cmd
		for d := 0; d < depth && lo < n; d++ {
			hi := min(lo+batch, n)
			args := make([]any, 0, 2+hi-lo)
			args = append(args, "BF.MEXISTS", key)
			for i := lo; i < hi; i++ {
				args = append(args, name(i))
			}
			cmds = append(cmds, pipe.Do(ctx, args...))
			lo = hi
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return 0, fmt.Errorf("BF.MEXISTS: %w", err)
		}
		for _, cmd := range cmds {
			a, err := cmd.Slice()
			if err != nil {
				return 0, err
			}
			for _, v := range a {
				if v == int64(1) {
					ones++
				}
			}
		}
	}
	return ones, nil
}

// mexistsRate runs c.Conns connections, each keeping c.Pipeline BF.MEXISTS
// of c.MExistsBatch never-added items in flight, for c.MExistsTime seconds.
// The items come from a pool of 10^6 never-added items built beforehand, so
// the generator formats nothing while it measures.
func mexistsRate(ctx context.Context, cl *redis.Client, c Config) (items, hits int64, secs float64, err error) {
	const pool = 1 << 20
	names := make([]any, pool)
	for i := range names {
		names[i] = neverName(i)
	}
	var total, ones atomic.Int64
	deadline := time.Now().Add(time.Duration(c.MExistsTime * float64(time.Second)))
	var wg sync.WaitGroup
	errs := make(chan error, c.Conns)
	start := time.Now()
	for w := range c.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := cl.Conn()
			defer conn.Close()
			calls := make([][]any, c.Pipeline)
			off := (w * pool / c.Conns) % pool
			for time.Now().Before(deadline) {
				pipe := conn.Pipeline()
				cmds := make([]*redis.Cmd, c.Pipeline)
				for d := range calls {
					if off+c.MExistsBatch > pool {
						off = 0
					}
					calls[d] = append(append(calls[d][:0], "BF.MEXISTS", c.Key), names[off:off+c.MExistsBatch]...)
					off += c.MExistsBatch
					cmds[d] = pipe.Do(ctx, calls[d]...)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					errs <- fmt.Errorf("BF.MEXISTS: %w", err)
					return
				}
				n, o := 0, 0
				for _, cmd := range cmds {
					a, _ := cmd.Slice()
					n += len(a)
					for _, v := range a {
						if v == int64(1) {
							o++
						}
					}
				}
				total.Add(int64(n))
				ones.Add(int64(o))
			}
		}()
	}
	wg.Wait()
	secs = time.Since(start).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, 0, err
	}
	return total.Load(), ones.Load(), secs, nil
}

func readResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return &r, nil
}

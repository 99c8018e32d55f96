package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/serve"
)

// startServe runs bloomkit serve in the test process over a new folder.
func startServe(t *testing.T) (addr, dir string) {
	t.Helper()
	cfg := serve.Defaults()
	cfg.Dir = t.TempDir()
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := serve.New(cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	t.Cleanup(func() { s.Shutdown(); <-done })
	return s.Addr().String(), cfg.Dir
}

func smallConfig(addr, dir string) Config {
	return Config{Name: "bloomkit", Addr: addr, Key: "grown", Dir: dir, N: 5000, Batch: 1000, Start: 100,
		FPPoints: 1000, FPFinal: 5000, FNSample: 500, FNFinal: 5000, Conns: 2, Pipeline: 2, MExistsBatch: 100,
		MExistsTime: 0.2, TargetRate: 0.01, MaxBitsAll: 24, MaxBitsFinal: 16, MExistsFactor: 2}
}

// TestGrowthOnServe runs the growth program's measurement on a real server
// (small sizes): the points are 100·2^k and one item after each, every
// sampled added item answers 1, the key's file is counted, and the
// BF.MEXISTS rate counts answered items.
func TestGrowthOnServe(t *testing.T) {
	addr, dir := startServe(t)
	var out bytes.Buffer
	res, err := Measure(context.Background(), smallConfig(addr, dir), &out)
	require.NoError(t, err)
	var items []int
	for _, p := range res.Points {
		items = append(items, p.Items)
		require.Zero(t, p.FNMissed, "false negative at %d items", p.Items)
		require.Equal(t, min(500, p.Items), p.FNChecked)
		require.Equal(t, 1000, p.FPChecked)
	}
	require.Equal(t, []int{100, 101, 200, 201, 400, 401, 800, 801, 1600, 1601, 3200, 3201}, items)
	require.Equal(t, 5000, res.Final.Items)
	require.Zero(t, res.Final.FNMissed)
	require.Equal(t, 5000, res.Final.FNChecked)
	fi, err := os.Stat(filepath.Join(dir, "grown.bloom"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.Final.FileBytes, fi.Size(), "the key's file is counted")
	require.InDelta(t, float64(max(res.Final.InfoSize, res.Final.FileBytes))*8/5000, res.Final.Bits, 1e-9)
	require.GreaterOrEqual(t, res.MaxBitsCall, res.Final.Bits)
	require.Positive(t, res.MExists.Items)
	require.Zero(t, res.MExists.Items%100, "whole BF.MEXISTS replies of 100 items")
	require.Less(t, res.MExists.Hits, res.MExists.Items/10, "never-added items mostly answer 0")
	require.Contains(t, out.String(), "BF.MEXISTS of never-added items")

	// The key now exists: a second run must refuse to start from it.
	_, err = Measure(context.Background(), smallConfig(addr, dir), io.Discard)
	require.ErrorContains(t, err, "exists")
}

// TestKeyFiles counts the key's files, the log and the temporaries apart,
// and leaves other keys' files out.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{
		"k.bloom": 1000, "k.bloom.extra": 24, "k.bloom.log": 300, ".k.bloom.tmp-1": 50,
		"kk.bloom": 1 << 20, "k.bloomx": 1 << 20, "other.bloom.log": 1 << 20,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644))
	}
	files, logs, tmps, err := keyFiles(dir, "k")
	require.NoError(t, err)
	// Each small file takes at least its length; allocated blocks may be more.
	require.GreaterOrEqual(t, files, int64(1024))
	require.Less(t, files, int64(1<<20), "kk.bloom and k.bloomx are other keys")
	require.GreaterOrEqual(t, logs, int64(300))
	require.Less(t, logs, int64(1<<20))
	require.GreaterOrEqual(t, tmps, int64(50))
	f, l, tm, err := keyFiles("", "k")
	require.NoError(t, err)
	require.Zero(t, f+l+tm, "no folder: BF.INFO Size only")
}

// TestReport checks the targets' verdicts on two made-up runs and that
// -strict fails on a missed target.
func TestReport(t *testing.T) {
	cfg := smallConfig("", "")
	cfg.N = 1000
	bk := &Result{Config: cfg, Final: Point{Items: 1000, Bits: 12, InfoSize: 1500, FPRate: 0.009, FNChecked: 10, FileBytes: 1500},
		Points: []Point{{Items: 100, Bits: 30, InfoSize: 375, FPRate: 0.002, FNChecked: 10}}}
	bk.MExists.Rate = 3e6
	rb := &Result{Config: cfg, Final: Point{Items: 1000, Bits: 40, FPRate: 0.009, FNChecked: 10}}
	rb.MExists.Rate = 1e6
	verdict := map[string]bool{}
	for _, r := range Rows(bk, rb) {
		if !r.Info {
			verdict[strings.Fields(r.What)[0]+" "+strings.Fields(r.What)[1]] = r.Pass
		}
	}
	require.Equal(t, map[string]bool{
		"bits/item at": true, "false-positive rate": true, "false negatives": true,
		"BF.MEXISTS never-added,": true, "largest bits/item": false, "largest false-positive": true,
	}, verdict)

	dir := t.TempDir()
	write := func(name string, r *Result) string {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	bp, rp := write("bk.json", bk), write("rb.json", rb)
	var out bytes.Buffer
	require.NoError(t, run([]string{"report", "-bloomkit", bp, "-redisbloom", rp}, &out))
	require.Contains(t, out.String(), "| FAIL |")
	require.Contains(t, out.String(), "| 3.00 | ≥ 2× RB | pass |")
	require.ErrorContains(t, run([]string{"report", "-strict", "-bloomkit", bp, "-redisbloom", rp}, io.Discard), "missed")
	bk.Points[0].Bits, bk.Points[0].InfoSize = 20, 250
	bp = write("bk.json", bk)
	require.NoError(t, run([]string{"report", "-strict", "-bloomkit", bp, "-redisbloom", rp}, io.Discard))
}

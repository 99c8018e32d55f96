package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun runs the whole runner on tiny filters: every variant, two sizes,
// a two-point sweep. It checks that the tables, the JSON and every plot
// come out, and that the numbers in them are sane.
func TestRun(t *testing.T) {
	out := t.TempDir()
	cfg, err := parseFlags([]string{"-q", "-sizes", "1e3,4e3", "-url-sizes", "1e3", "-sweep", "0.1,0.01",
		"-sweep-n", "2e3", "-benchtime", "1ms", "-reps", "2", "-fpr-trials", "2e4", "-max-trials", "4e4",
		"-summary-n", "4e3", "-out", out}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := run(cfg, &md, os.Stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Summary", "## 16B keys, n = 4e3", "## url60B keys, n = 1e3", "| **standard** |",
		"## Accuracy sweep", "### Open time", "boom-classic"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if saved, err := os.ReadFile(filepath.Join(out, "results.md")); err != nil || !bytes.Equal(saved, md.Bytes()) {
		t.Errorf("results.md differs from the printed report (%v)", err)
	}
	js, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	for _, x := range r.Results {
		if x.FalseNeg != 0 {
			t.Errorf("%s n=%d: %d false negatives", x.Variant, x.N, x.FalseNeg)
		}
		if x.Trials < 2e4 || x.BitsPerKey <= 0 {
			t.Errorf("%s n=%d: %d trials, %g bits per key", x.Variant, x.N, x.Trials, x.BitsPerKey)
		}
		if x.Part == "size" && !(x.HitNs > 0 && x.MissNs > 0 && x.HitNs < 1e6) {
			t.Errorf("%s n=%d: hit %g ns, miss %g ns", x.Variant, x.N, x.HitNs, x.MissNs)
		}
		if x.Part == "size" && x.Ours && x.Keys == "16B" && !(x.OpenNs > 0) {
			t.Errorf("%s n=%d: no open time", x.Variant, x.N)
		}
	}
	again := t.TempDir()
	var md2 bytes.Buffer
	if err := render(filepath.Join(out, "results.json"), again, &md2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md.Bytes(), md2.Bytes()) {
		t.Error("-render of results.json does not reproduce the report")
	}
	for _, name := range []string{"lookup_miss_vs_size.png", "lookup_hit_vs_size.png", "add_vs_size.png",
		"fpr_vs_target.png", "fpr_ratio_vs_target.png", "bits_vs_target.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
			t.Errorf("%s is %v", name, b)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, bad := range [][]string{{"-p", "2"}, {"-sizes", "abc"}, {"-sweep", "0"}, {"-reps", "0"}, {"extra"}, {"-variants", "nope"}} {
		if _, err := parseFlags(append(bad, "-out", t.TempDir()), &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q) did not fail", bad)
		}
	}
	cfg, err := parseFlags([]string{"-full", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.sizes[len(cfg.sizes)-1] != 1e9 || cfg.sweepN != 1e6 {
		t.Errorf("-full: sizes %v, sweep n %d", cfg.sizes, cfg.sweepN)
	}
}

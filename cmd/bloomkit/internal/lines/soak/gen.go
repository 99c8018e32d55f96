//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
)

// mix is splitmix64's finaliser: a bijection of uint64, so the keys made
// from 0..n-1 are distinct and look random.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

const hexDigits = "0123456789abcdef"

// putHex writes x as 16 lowercase hex digits into b.
func putHex(b []byte, x uint64) {
	for i := 15; i >= 0; i-- {
		b[i] = hexDigits[x&15]
		x >>= 4
	}
}

// urlPrefix makes the URL lines 56 bytes with their LF: 32 + 16 + 2 + 5 + 1.
const urlPrefix = "https://www.example.com/catalog/"

// generate writes n distinct lines of the kind ("url": 56-byte URL lines;
// "key16": 16 hex digits and a LF) to w, or stops with ctx's error.
func generate(ctx context.Context, w io.Writer, kind string, n uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	switch kind {
	case "url":
		line = make([]byte, 56)
		copy(line, urlPrefix)
		copy(line[48:], "/p")
	case "key16":
		line = make([]byte, 17)
	default:
		return fmt.Errorf("unknown kind %q (url|key16)", kind)
	}
	line[len(line)-1] = '\n'
	for i := uint64(0); i < n; i++ {
		if i&(1<<20-1) == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if kind == "url" {
			putHex(line[32:48], mix(i))
			d := strconv.AppendUint(nil, 100000+i%100000, 10)
			copy(line[50:55], d[1:])
		} else {
			putHex(line[:16], mix(i))
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// genMain is `soak gen`: the key file alone.
func genMain(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: soak gen url|key16 N FILE")
	}
	n, err := parseCount(args[1])
	if err != nil {
		return err
	}
	f, err := os.Create(args[2])
	if err != nil {
		return err
	}
	if err := generate(context.Background(), f, args[0], n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// parseCount reads 1e7, 100000000 and the like.
func parseCount(s string) (uint64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 1 || f > 1e12 || f != float64(uint64(f)) {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return uint64(f), nil
}

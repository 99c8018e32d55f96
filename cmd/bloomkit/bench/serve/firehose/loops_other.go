//go:build !linux

package main

import (
	"errors"
	"sync/atomic"
	"time"
)

const haveLoops = false

func runLoops(string, [][][]byte, int, *atomic.Int64, int) (int64, int64, time.Duration, error) {
	return 0, 0, 0, errors.New("event loops need Linux")
}

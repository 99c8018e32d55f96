package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDedupWarnsWhenCapacityIsCrossed replays issue 26 row 7 for dedup: it
// warned of a filter past its capacity only at the end of its input, so a
// dedup on an endless pipe (tail -f) never did. Now the warning comes when
// the lines pass the capacity, while the pipe is still open.
func TestDedupWarnsWhenCapacityIsCrossed(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bloomkitBin, "dedup", "-n", "1000", "-state", "seen.bloom")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	_, err = io.WriteString(stdin, keyLines("line", 1500))
	require.NoError(t, err)
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stderr).ReadString('\n')
		lines <- l
	}()
	select {
	case l := <-lines:
		require.Contains(t, l, "bloomkit dedup: warning: seen.bloom: more keys than its capacity of 1000")
	case <-time.After(20 * time.Second):
		require.FailNow(t, "no warning while the input is open")
	}
}

// TestDedupStrict: with -strict dedup stops at the capacity (exit 2); the
// lines printed are the lines recorded, and the next run goes on from
// there.
func TestDedupStrict(t *testing.T) {
	dir := t.TempDir()
	in := keyLines("line", 1500)
	r := bk(t, dir, in, "dedup", "-strict", "-n", "1000", "-state", "seen.bloom")
	r.fails(t, "seen.bloom", "capacity of 1000", "-strict")
	printed := strings.Count(r.stdout, "\n")
	require.GreaterOrEqual(t, printed, 1000)
	require.Contains(t, bk(t, dir, "", "info", "seen.bloom").ok(t), fmt.Sprintf("added          %d ", 1000))
}

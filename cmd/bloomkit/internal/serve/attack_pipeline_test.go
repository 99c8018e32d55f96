package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mixed is a deterministic mix of commands over a few keys whose prefix is
// p: adds, lookups in runs (batched), MEXISTS, INSERT, CARD, PING, ECHO,
// EXISTS and unknown commands.
func mixed(p string, n int) [][]string {
	// The keys are reserved fixed (NONSCALING) first: a growing filter's
	// "new" answer to BF.ADD depends on when its background rebuild lands
	// (a false positive of the smaller table or not), so two runs of the
	// same commands may differ in it; a fixed filter answers the same.
	var cmds [][]string
	for i := range 3 {
		cmds = append(cmds, []string{"BF.RESERVE", fmt.Sprintf("%s%d", p, i), "0.01", "1000000", "NONSCALING"})
	}
	for i := range n {
		k := fmt.Sprintf("%s%d", p, i%3)
		it := fmt.Sprintf("i%d", i/2)
		switch i % 11 {
		case 0, 3, 7:
			cmds = append(cmds, []string{"BF.ADD", k, it})
		case 1, 2, 4, 5, 8:
			cmds = append(cmds, []string{"BF.EXISTS", k, it}, []string{"bf.exists", k, "absent" + it})
		case 6:
			cmds = append(cmds, []string{"BF.MEXISTS", k, it, "nope", fmt.Sprintf("i%d", i/3)})
		case 9:
			cmds = append(cmds, []string{"PING"}, []string{"ECHO", it}, []string{"EXISTS", k, p + "none"})
		case 10:
			cmds = append(cmds, []string{"BF.INSERT", k, "ITEMS", it, "x" + it}, []string{"BF.CARD", k}, []string{"NOPE", it})
		}
	}
	return cmds
}

func encodeAll(cmds [][]string) string {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(encode(c...))
	}
	return b.String()
}

// oneByOne sends each command alone and waits for its reply.
func oneByOne(t *testing.T, addr string, cmds [][]string) []string {
	r := dialRaw(t, addr)
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = r.do(c...)
	}
	return out
}

// readN reads n replies from rd.
func readN(t *testing.T, rd *bufio.Reader, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		var err error
		out[i], err = readReply(rd)
		require.NoError(t, err, "reply %d of %d", i, n)
	}
	return out
}

// TestAttackPipelineMatchesOneByOne: 100,000 commands of a mix over three
// keys in one write, replies read while it is written, against the same
// commands one at a time on a second server: the same replies in the same
// order, and every item added (acknowledged earlier in the pipeline) found.
func TestAttackPipelineMatchesOneByOne(t *testing.T) {
	n := 55000   // about 100,000 commands
	if !long() { // the large form with BLOOMKIT_LONG=1 (.ci/run)
		n = 8000
	}
	cmds := mixed("k", n)
	a := start(t, cfgWith(nil))
	b := start(t, cfgWith(nil))
	c, err := net.Dial("tcp", a.addr)
	require.NoError(t, err)
	defer c.Close()
	werr := make(chan error, 1)
	go func() { _, err := io.WriteString(c, encodeAll(cmds)); werr <- err }()
	c.SetReadDeadline(time.Now().Add(120 * time.Second))
	got := readN(t, bufio.NewReaderSize(c, 1<<16), len(cmds))
	require.NoError(t, <-werr)
	want := oneByOne(t, b.addr, cmds)
	added := map[string]bool{}
	for i, cmd := range cmds {
		require.Equal(t, want[i], got[i], "command %d %q", i, cmd)
		switch cmd[0] {
		case "BF.ADD":
			added[cmd[1]+" "+cmd[2]] = true
		case "BF.EXISTS":
			if added[cmd[1]+" "+cmd[2]] {
				require.Equal(t, ":1", got[i], "command %d %q: a false negative", i, cmd)
			}
		}
	}
	t.Logf("%d commands", len(cmds))
}

// TestAttackSplitEverywhere: a pipeline of mixed commands, inline ones with
// quotes and escapes among them, written in two parts split at every byte
// (the server reads them apart, mostly: a pause between the writes): the
// same replies as the commands sent one by one (a second time: the adds
// then answer 0 whatever the split).
func TestAttackSplitEverywhere(t *testing.T) {
	ts := start(t, cfgWith(nil))
	pipe := func(p string) (string, [][]string) {
		cmds := mixed(p, 12)[3:] // without the reservations: every split of them costs a command
		s := encodeAll(cmds)
		// Inline forms: quotes, escapes, CRLF and bare LF, empty lines.
		s += "BF.ADD " + p + "0 \"a b\\tc\"\r\n\n  BF.EXISTS   " + p + "0 'a b\tc'  \nBF.EXISTS " + p + "0 \"a b\\x\"\r\n"
		cmds = append(cmds, []string{"BF.ADD", p + "0", "a b\tc"}, []string{"BF.EXISTS", p + "0", "a b\tc"}, []string{"BF.EXISTS", p + "0", "a bx"})
		return s, cmds
	}
	s, cmds := pipe("s")
	oneByOne(t, ts.addr, cmds)         // the keys and items exist from here on
	want := oneByOne(t, ts.addr, cmds) // and these replies do not change
	for i := 1; i < len(s); i++ {
		c, err := net.Dial("tcp", ts.addr)
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(20 * time.Second))
		_, err = io.WriteString(c, s[:i])
		require.NoError(t, err)
		time.Sleep(200 * time.Microsecond)
		_, err = io.WriteString(c, s[i:])
		require.NoError(t, err)
		got := readN(t, bufio.NewReader(c), len(cmds))
		c.Close()
		require.Equal(t, want, got, "split at %d", i)
	}
}

// TestAttackConcurrentPipelines: four clients each write a mix over their
// own keys, with KEYS replies of 20 KB among the batched lookups (so the
// replies of one read go out in several writes, lookups queued between),
// all at once in one write each; the replies of each equal its commands run
// one at a time on a second server.
func TestAttackConcurrentPipelines(t *testing.T) {
	n := 6000
	if !long() { // the large form with BLOOMKIT_LONG=1 (.ci/run)
		n = 400
	}
	long := func(i int) string { return fmt.Sprintf("%03d%s", i, strings.Repeat("n", 197)) }
	a := start(t, cfgWith(nil))
	b := start(t, cfgWith(nil))
	makeKeys(t, a.addr, 200, long)
	makeKeys(t, b.addr, 200, long)
	var all [4][][]string
	for ci := range all {
		for i, c := range mixed(fmt.Sprintf("c%d-", ci), n) {
			all[ci] = append(all[ci], c)
			if i%40 == 0 {
				all[ci] = append(all[ci], []string{"KEYS", "0*"})
			}
		}
	}
	got := make([][]string, len(all))
	errs := make(chan error, len(all))
	for ci := range all {
		go func() {
			c, err := net.Dial("tcp", a.addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(120 * time.Second))
			go io.WriteString(c, encodeAll(all[ci]))
			rd := bufio.NewReaderSize(c, 1<<16)
			for range all[ci] {
				r, err := readReply(rd)
				if err != nil {
					errs <- err
					return
				}
				got[ci] = append(got[ci], r)
			}
			errs <- nil
		}()
	}
	for range all {
		require.NoError(t, <-errs)
	}
	for ci := range all {
		want := oneByOne(t, b.addr, all[ci])
		for i := range want {
			require.Equal(t, want[i], got[ci][i], "client %d command %d %q", ci, i, all[ci][i])
		}
	}
}

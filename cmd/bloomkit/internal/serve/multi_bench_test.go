package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
)

// BenchmarkMultiExec compares 100 BF.EXISTS pipelined with the same 100
// in MULTI/EXEC (issue 31: a transaction should cost about what the
// pipeline costs). One op is one round of 100 commands.
func BenchmarkMultiExec(b *testing.B) {
	ts := start(b, cfgWith(nil))
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	io.WriteString(c, encode("BF.ADD", "k", "a"))
	readReply(rd)
	var cmds strings.Builder
	for i := range 100 {
		cmds.WriteString(encode("BF.EXISTS", "k", fmt.Sprint("x", i)))
	}
	for _, tx := range []bool{false, true} {
		msg, replies := cmds.String(), 100
		if tx {
			msg, replies = encode("MULTI")+msg+encode("EXEC"), 102
		}
		b.Run(fmt.Sprintf("multi=%v", tx), func(b *testing.B) {
			for range b.N {
				if _, err := io.WriteString(c, msg); err != nil {
					b.Fatal(err)
				}
				for range replies {
					if _, err := readReply(rd); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

package serve

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/tidwall/redcon"
)

var fuzzSeeds = []string{
	"*1\r\n$4\r\nPING\r\n",
	"*3\r\n$9\r\nBF.EXISTS\r\n$1\r\nk\r\n$1\r\nv\r\n",
	"*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$7\r\nBF.CARD\r\n$1\r\nk\r\n",
	"*4\r\n$10\r\nBF.RESERVE\r\n$5\r\n../x/\r\n$4\r\n0.01\r\n$3\r\n100\r\n",
	"*5\r\n$9\r\nBF.INSERT\r\n$1\r\nk\r\n$1\r\nC\r\n$2\r\n-1\r\n$5\r\nITEMS\r\n",
	"*1\r\n$9223372036854775807\r\n",
	"*9223372036854775807\r\n",
	"*2\r\n$4\r\nPING\r\n$3\r\nabcde\r\n",
	"PING\r\nBF.EXISTS k v\r\n",
	"\"unbalanced\r\n",
	"*1\r\n$4\r\nPI",
	"*0\r\n*-1\r\n",
	"$4\r\nPING\r\n",
	"BF.INFO k 'size\r\n",
}

// FuzzParser: whatever the guard lets through, redcon's parser takes
// without a panic, and no accepted command breaks the limits.
func FuzzParser(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(3))
	}
	s := &Server{cfg: Defaults(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.cfg.MaxArgs, s.cfg.MaxBulk, s.cfg.MaxCommand = 16, 64, 512
	s.pending.max = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		// The guard sees the stream in two reads, split anywhere, and
		// redcon reads what the guard hands on.
		cut := int(split) % (len(data) + 1)
		g := &guardConn{Conn: &chunkConn{chunks: [][]byte{data[:cut], data[cut:]}}, s: s, lim: limitsOf(&s.cfg), authed: true}
		rd := redcon.NewReader(g)
		for {
			cmd, err := rd.ReadCommand()
			if err != nil {
				return
			}
			if len(cmd.Args) > 16 {
				t.Fatalf("%d args passed the guard", len(cmd.Args))
			}
			for _, a := range cmd.Args {
				if len(a) > maxInline {
					t.Fatalf("argument of %d bytes passed the guard", len(a))
				}
			}
		}
	})
}

// FuzzServer sends the input to a running server on one connection; the
// server must then still answer another client.
func FuzzServer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	ts := start(f, cfgWith(func(c *Config) { c.MaxArgs, c.MaxBulk, c.MaxCommand = 64, 256, 4096 }))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		io.Copy(io.Discard, c)
		c.Close()
		r := dialRaw(t, ts.addr)
		if got := r.do("PING"); got != "+PONG" {
			t.Fatalf("server answers %q after %q", got, data)
		}
	})
}

// chunkConn is a net.Conn whose reads return chunks, one each, then EOF.
type chunkConn struct {
	net.Conn
	chunks [][]byte
}

func (c *chunkConn) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func (c *chunkConn) Write(p []byte) (int, error)        { return len(p), nil }
func (c *chunkConn) SetWriteDeadline(t time.Time) error { return nil }
func (c *chunkConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }

package serve

import (
	"bytes"
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
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

// FuzzParser: whatever the guard lets through, the server's parser
// (wire.Reader) takes without a panic, and no accepted command breaks the
// limits.
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
		for _, cmd := range parseAll(t, readAll(g), int(split)) {
			if len(cmd) > 16 {
				t.Fatalf("%d args passed the guard", len(cmd))
			}
			for _, a := range cmd {
				if len(a) > maxInline {
					t.Fatalf("argument of %d bytes passed the guard", len(a))
				}
			}
		}
	})
}

// readAll returns what r hands on until its first error.
func readAll(r io.Reader) []byte {
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out
		}
	}
}

// parseAll parses data with a wire.Reader fed in two reads, split at cut
// (mod the length), and returns copies of the commands; a protocol error
// ends them.
func parseAll(t *testing.T, data []byte, cut int) [][][]byte {
	cmds, _ := parseAllErr(t, data, cut)
	return cmds
}

func parseAllErr(t *testing.T, data []byte, cut int) ([][][]byte, error) {
	var rd wire.Reader
	var cmds [][][]byte
	cut %= len(data) + 1
	for len(data) > 0 {
		sp := rd.Space()
		if cut > 0 {
			sp = sp[:min(len(sp), cut)]
		}
		n := copy(sp, data)
		data = data[n:]
		cut -= n
		rd.Filled(n)
		for {
			args, err := rd.Next()
			if err != nil {
				return cmds, err
			}
			if args == nil {
				break
			}
			var c [][]byte
			for _, a := range args {
				c = append(c, bytes.Clone(a))
			}
			cmds = append(cmds, c)
		}
		rd.Reset()
	}
	return cmds, nil
}

// FuzzRESPReader: on every stream the guard lets through, the server's
// parser (wire.Reader, fed in reads split anywhere) returns the commands
// redcon's parser returns, and a protocol error where redcon has one
// (redcon drops the whole commands read in the same batch as the error;
// wire.Reader answers them first, as Redis does).
func FuzzRESPReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(3))
	}
	for _, s := range []string{
		"BF.EXISTS k \"a b\" 'c d'\r\nPING\n",
		"SET k \"a\\nb\\\"c\"\r\n",
		"  PING   x  \r\n\r\n\n",
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
		"*1\r\n$4\r\nPINGxx",
		"ECHO \"\"\r\n",
		"ECHO a\"b\r\n",
		"ECHO \"a\"b\r\n",
	} {
		f.Add([]byte(s), uint8(1))
	}
	s := &Server{cfg: Defaults(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.cfg.MaxArgs, s.cfg.MaxBulk, s.cfg.MaxCommand = 64, 1024, 4096
	s.pending.max = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		g := &guardConn{Conn: &chunkConn{chunks: [][]byte{data}}, s: s, lim: limitsOf(&s.cfg), authed: true}
		passed := readAll(g)
		var want [][][]byte
		wantErr := false
		rr := redcon.NewReader(bytes.NewReader(passed))
		for {
			cmd, err := rr.ReadCommand()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				wantErr = true
				break
			}
			want = append(want, cmd.Args)
		}
		got, err := parseAllErr(t, passed, int(split))
		if wantErr != (err != nil) {
			t.Fatalf("%q: redcon's error %v, wire.Reader's %v", passed, wantErr, err)
		}
		if len(got) < len(want) || (!wantErr && len(got) != len(want)) {
			t.Fatalf("%q: wire.Reader %q, redcon %q", passed, got, want)
		}
		for i := range want {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("%q: command %d: wire.Reader %q, redcon %q", passed, i, got[i], want[i])
			}
			for j := range want[i] {
				if !bytes.Equal(got[i][j], want[i][j]) {
					t.Fatalf("%q: command %d: wire.Reader %q, redcon %q", passed, i, got[i], want[i])
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

package serve

import (
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ext is the server state of issue 31's commands.
type ext struct {
	mu      sync.Mutex // guards the fields below and clients' name and proto
	nextID  uint64
	clients map[uint64]*client
	loads   map[string]*load     // BF.LOADCHUNKs in progress (dump.go)
	dumps   map[string]dumpState // BF.SCANDUMPs of growing keys in progress (dump.go)

	expMu   sync.Mutex          // serializes expiry changes, RENAME and the expiry pass (expire.go)
	expKeys map[string]struct{} // the keys with an expiry sidecar (under expMu)
	expOnce sync.Once
	// sideMu orders the reads and writes of expiry sidecars with the
	// checkpoints that move them to a new snapshot (innermost lock).
	sideMu sync.Mutex
}

// addClient registers a new connection for CLIENT LIST/KILL and gives it
// its CLIENT ID.
func (s *Server) addClient(c wire.Conn, cl *client) {
	s.x.expOnce.Do(s.startExpiry)
	s.x.mu.Lock()
	defer s.x.mu.Unlock()
	if s.x.clients == nil {
		s.x.clients = map[uint64]*client{}
	}
	s.x.nextID++
	cl.id, cl.conn, cl.since = s.x.nextID, c, time.Now()
	s.x.clients[cl.id] = cl
}

// removeClient forgets a closed connection and drops its transaction.
func (s *Server) removeClient(cl *client) {
	s.x.mu.Lock()
	delete(s.x.clients, cl.id)
	s.x.mu.Unlock()
	s.endTx(cl)
}

func clientID(cl *client) uint64 { return cl.id }

func (s *Server) setName(cl *client, name string) {
	s.x.mu.Lock()
	cl.name = name
	s.x.mu.Unlock()
}

func (s *Server) setProto(cl *client, proto int) {
	s.x.mu.Lock()
	cl.proto = proto
	s.x.mu.Unlock()
}

// clientLine is a client's line of CLIENT LIST and CLIENT INFO, with
// Redis's fields that the server knows (s.x.mu held).
func clientLine(cl *client, now time.Time) string {
	laddr := ""
	if nc := cl.conn.NetConn(); nc != nil {
		laddr = nc.LocalAddr().String()
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s name=%s age=%d flags=N db=0 user=default resp=%d\n",
		cl.id, cl.conn.RemoteAddr(), laddr, cl.name, int64(now.Sub(cl.since).Seconds()), max(cl.proto, 2))
}

// cmdClient: CLIENT ID, GETNAME, SETNAME, SETINFO, INFO, LIST [ID id...],
// KILL addr | KILL [ID id] [ADDR addr] [LADDR addr] [SKIPME yes|no].
func cmdClient(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	sub := strings.ToLower(string(args[1]))
	want := map[string]int{"setname": 3, "getname": 2, "setinfo": 4, "id": 2, "info": 2, "list": -2, "kill": -3}
	n, ok := want[sub]
	switch {
	case !ok:
		c.WriteError("ERR unknown subcommand '" + clip(args[1], 64) + "'. Try CLIENT HELP.")
	case (n > 0 && len(args) != n) || (n < 0 && len(args) < -n):
		c.WriteError("ERR wrong number of arguments for 'client|" + sub + "' command")
	case sub == "setname":
		if strings.ContainsAny(string(args[2]), " \n") {
			c.WriteError("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		s.setName(cl, string(args[2]))
		c.WriteString("OK")
	case sub == "getname":
		if cl.name == "" {
			writeNull(c)
		} else {
			c.WriteBulkString(cl.name)
		}
	case sub == "setinfo":
		c.WriteString("OK")
	case sub == "id":
		c.WriteUint64(cl.id)
	case sub == "info":
		s.x.mu.Lock()
		line := clientLine(cl, time.Now())
		s.x.mu.Unlock()
		writeVerbatim(c, line)
	case sub == "list":
		s.clientList(c, args[2:])
	default:
		s.clientKill(c, cl, args[2:])
	}
}

func (s *Server) clientList(c wire.Conn, args [][]byte) {
	var only map[uint64]bool
	if len(args) > 0 {
		if !strings.EqualFold(string(args[0]), "id") || len(args) < 2 {
			c.WriteError("ERR syntax error")
			return
		}
		only = map[uint64]bool{}
		for _, a := range args[1:] {
			id, err := strconv.ParseUint(string(a), 10, 64)
			if err != nil || id == 0 {
				c.WriteError("ERR Invalid client ID")
				return
			}
			only[id] = true
		}
	}
	now := time.Now()
	var b strings.Builder
	s.x.mu.Lock()
	ids := make([]uint64, 0, len(s.x.clients))
	for id := range s.x.clients {
		if only == nil || only[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		b.WriteString(clientLine(s.x.clients[id], now))
	}
	s.x.mu.Unlock()
	writeVerbatim(c, b.String())
}

// clientKill closes the connections that match, as Redis's CLIENT KILL:
// the old form (one address) answers OK or "No such client", the new form
// the number of clients killed.
func (s *Server) clientKill(c wire.Conn, cl *client, args [][]byte) {
	old := len(args) == 1
	var id uint64
	var addr, laddr string
	skipMe := true
	if old {
		addr = string(args[0])
	} else {
		if len(args)%2 != 0 {
			c.WriteError("ERR syntax error")
			return
		}
		for i := 0; i < len(args); i += 2 {
			v := string(args[i+1])
			switch strings.ToLower(string(args[i])) {
			case "id":
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil || n == 0 {
					c.WriteError("ERR client-id should be greater than 0")
					return
				}
				id = n
			case "addr":
				addr = v
			case "laddr":
				laddr = v
			case "skipme":
				switch strings.ToLower(v) {
				case "yes":
					skipMe = true
				case "no":
					skipMe = false
				default:
					c.WriteError("ERR syntax error")
					return
				}
			default:
				c.WriteError("ERR syntax error")
				return
			}
		}
	}
	var victims []wire.Conn
	s.x.mu.Lock()
	for _, o := range s.x.clients {
		switch {
		case id != 0 && o.id != id,
			addr != "" && o.conn.RemoteAddr() != addr,
			laddr != "" && (o.conn.NetConn() == nil || o.conn.NetConn().LocalAddr().String() != laddr),
			!old && skipMe && o == cl:
			continue
		}
		victims = append(victims, o.conn)
		// Gone from the list now, as in Redis, not when its reader
		// notices the close: a second CLIENT KILL or LIST does not see it.
		delete(s.x.clients, o.id)
	}
	s.x.mu.Unlock()
	switch {
	case old && len(victims) == 0:
		c.WriteError("ERR No such client")
	case old:
		c.WriteString("OK")
	default:
		c.WriteInt(len(victims))
	}
	for _, v := range victims {
		if v == c {
			c.Close() // after its reply, as Redis closes the caller
			continue
		}
		if nc := v.NetConn(); nc != nil {
			nc.Close() // its reader stops; closed() unregisters it
		}
	}
}

package serve

import (
	"crypto/subtle"
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

func cmdPing(s *Server, c wire.Conn, cl *client, args [][]byte) {
	switch len(args) {
	case 1:
		c.WriteString("PONG")
	case 2:
		c.WriteBulk(args[1])
	default:
		arity(c, cl)
	}
}

func cmdEcho(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	c.WriteBulk(args[1])
}

func cmdQuit(s *Server, c wire.Conn, cl *client, args [][]byte) {
	c.WriteString("OK")
	c.Close()
}

// cmdHello answers HELLO [protover [AUTH user pass] [SETNAME name]] as
// Redis 7 does: protover 2 or 3 switches the connection to that protocol
// (after the options succeed), and the reply is a map of the server's
// facts (an array of pairs in RESP2). Other versions get NOPROTO.
func cmdHello(s *Server, c wire.Conn, cl *client, args [][]byte) {
	proto := cl.proto
	if len(args) > 1 {
		v, err := strconv.Atoi(string(args[1]))
		if err != nil {
			c.WriteError("ERR Protocol version is not an integer or out of range")
			return
		}
		if v != 2 && v != 3 {
			c.WriteError("NOPROTO sorry, this protocol version is not supported")
			return
		}
		proto = v
	}
	for i := 2; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "AUTH":
			if i+2 >= len(args) {
				c.WriteError("ERR Syntax error in HELLO option 'auth'")
				return
			}
			if !s.authenticate(c, cl, args[i+1], args[i+2]) {
				return
			}
			i += 2
		case "SETNAME":
			if i+1 >= len(args) {
				c.WriteError("ERR Syntax error in HELLO option 'setname'")
				return
			}
			s.setName(cl, string(args[i+1]))
			i++
		default:
			c.WriteError("ERR Syntax error in HELLO option '" + clip(args[i], 64) + "'")
			return
		}
	}
	if !cl.authed {
		c.WriteError("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	s.setProto(cl, proto)
	writeMap(c, 7)
	for _, kv := range [][2]string{{"server", "redis"}, {"version", redisVersion}} {
		c.WriteBulkString(kv[0])
		c.WriteBulkString(kv[1])
	}
	c.WriteBulkString("proto")
	c.WriteInt(max(cl.proto, 2))
	c.WriteBulkString("id")
	c.WriteUint64(clientID(cl))
	c.WriteBulkString("mode")
	c.WriteBulkString("standalone")
	c.WriteBulkString("role")
	c.WriteBulkString("master")
	c.WriteBulkString("modules")
	writeModules(c)
}

// redisVersion is the Redis version the server reports to clients that
// check it; the commands are those of Redis 7.0 with RedisBloom 2.6.
const redisVersion = "7.0.0"

func cmdAuth(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 && len(args) != 3 {
		arity(c, cl)
		return
	}
	if s.cfg.Password == "" {
		c.WriteError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	user := []byte("default")
	if len(args) == 3 {
		user = args[1]
	}
	if s.authenticate(c, cl, user, args[len(args)-1]) {
		c.WriteString("OK")
	}
}

// authenticate is AUTH user pass, for AUTH and HELLO's AUTH alike: the only
// user is "default" (Redis's user without ACLs); any other is refused with
// Redis's error, whatever the password.
func (s *Server) authenticate(c wire.Conn, cl *client, user, pass []byte) bool {
	if string(user) != "default" {
		s.authFailed(c, "unknown user")
		c.WriteError("WRONGPASS invalid username-password pair or user is disabled.")
		return false
	}
	return s.checkPassword(c, cl, pass)
}

// authFailed counts a refused AUTH (INFO rejected_auth) and logs it at a
// bounded rate (logRefusal): a client guessing passwords as fast as it
// can is neither slowed (as in Redis, the password is the only defence)
// nor able to flood the log; each line names the client and counts those
// suppressed before it.
func (s *Server) authFailed(c wire.Conn, why string) {
	s.stats.authFails.Add(1)
	s.logRefusal(slog.LevelWarn, "authentication failed", "client", c.RemoteAddr(), "reason", why)
}

func (s *Server) checkPassword(c wire.Conn, cl *client, pass []byte) bool {
	if s.cfg.Password != "" && subtle.ConstantTimeCompare(pass, []byte(s.cfg.Password)) != 1 {
		s.authFailed(c, "wrong password")
		c.WriteError("WRONGPASS invalid username-password pair or user is disabled.")
		return false
	}
	if !cl.authed && cl.guard != nil {
		cl.guard.authenticated()
	}
	cl.authed = true
	return true
}

func cmdSelect(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	n, err := strconv.Atoi(string(args[1]))
	switch {
	case err != nil:
		c.WriteError("ERR value is not an integer or out of range")
	case n != 0:
		c.WriteError("ERR DB index is out of range")
	default:
		c.WriteString("OK")
	}
}

func cmdDBSize(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 1 {
		arity(c, cl)
		return
	}
	names, err := s.names()
	if err != nil {
		c.WriteError("ERR " + err.Error())
		return
	}
	c.WriteInt(len(names))
}

// present reports whether key has a filter file (a name that could not be
// a key has none).
func (s *Server) present(key []byte) bool {
	_, err := s.lookup(key)
	return err == nil
}

func cmdExistsKeys(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	n := 0
	for _, k := range args[1:] {
		if s.present(k) {
			n++
		}
	}
	c.WriteInt(n)
}

func cmdType(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	if s.present(args[1]) {
		c.WriteString("MBbloom--") // RedisBloom's type name
	} else {
		c.WriteString("none")
	}
}

func cmdDel(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	n := 0
	for _, k := range args[1:] {
		ok, err := s.remove(k)
		if err != nil {
			s.keyError(c, err)
			return
		}
		if ok {
			n++
		}
	}
	c.WriteInt(n)
}

func cmdKeys(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	names, err := s.names()
	if err != nil {
		c.WriteError("ERR " + err.Error())
		return
	}
	var out []string
	g := compileGlob(string(args[1]))
	cl.checked = time.Now()
	for i, n := range names {
		var ok bool
		if ok, cl.row = g.match(n, cl.row); ok {
			out = append(out, n)
		}
		if i%64 == 63 && cl.gone(s) {
			return // nobody to answer
		}
	}
	c.WriteArray(len(out))
	for _, n := range out {
		c.WriteBulkString(n)
	}
}

// cmdScan: SCAN cursor [MATCH pattern] [COUNT n] [TYPE t]; the cursor is
// a position in the sorted list of names.
func cmdScan(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 || len(args)%2 != 0 {
		arity(c, cl)
		return
	}
	cursor, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		c.WriteError("ERR invalid cursor")
		return
	}
	pattern, count, typ, err := scanOptions(args[2:])
	if err != nil {
		c.WriteError(err.Error())
		return
	}
	names, err := s.names()
	if err != nil {
		c.WriteError("ERR " + err.Error())
		return
	}
	var out []string
	g := compileGlob(pattern)
	cl.checked = time.Now()
	i := cursor
	for ; i < uint64(len(names)) && i < cursor+uint64(count); i++ {
		var ok bool
		if ok, cl.row = g.match(names[i], cl.row); ok && (typ == "" || strings.EqualFold(typ, "MBbloom--")) {
			out = append(out, names[i])
		}
		if i%64 == 63 && cl.gone(s) {
			return // nobody to answer
		}
	}
	if i >= uint64(len(names)) {
		i = 0
	}
	c.WriteArray(2)
	c.WriteBulkString(strconv.FormatUint(i, 10))
	c.WriteArray(len(out))
	for _, n := range out {
		c.WriteBulkString(n)
	}
}

func scanOptions(args [][]byte) (pattern string, count int, typ string, err error) {
	pattern, count = "*", 10
	for i := 0; i+1 < len(args); i += 2 {
		v := string(args[i+1])
		switch strings.ToUpper(string(args[i])) {
		case "MATCH":
			pattern = v
		case "COUNT":
			count, err = strconv.Atoi(v)
			if err != nil {
				return "", 0, "", errors.New("ERR value is not an integer or out of range")
			}
			if count < 1 {
				return "", 0, "", errors.New("ERR syntax error")
			}
		case "TYPE":
			typ = v
		default:
			return "", 0, "", errors.New("ERR syntax error")
		}
	}
	return pattern, count, typ, nil
}

// cmdConfig answers CONFIG GET for the two persistence settings that
// redis-benchmark and some clients read (the server has neither RDB nor
// AOF: "save" is empty, "appendonly" no) and nothing else; CONFIG SET and
// the rest are refused, since the settings are flags.
func cmdConfig(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	if strings.ToLower(string(args[1])) != "get" {
		c.WriteError("ERR CONFIG " + clip(args[1], 32) + " is not supported by bloomkit serve (its settings are flags)")
		return
	}
	var out []string
	for _, a := range args[2:] {
		g := compileGlob(strings.ToLower(string(a)))
		for _, kv := range [][2]string{{"save", ""}, {"appendonly", "no"}} {
			if ok, _ := g.match(kv[0], nil); ok {
				out = append(out, kv[0], kv[1])
			}
		}
	}
	writeMap(c, len(out)/2)
	for _, v := range out {
		c.WriteBulkString(v)
	}
}

package serve

import (
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"os"
	"runtime"
	"strings"
)

// moduleVersion is the RedisBloom version the server answers as (the
// module "bf" of RedisBloom 2.6.28, whose replies it matches).
const moduleVersion = 20628

// writeModules writes the module list of MODULE LIST and HELLO: the one
// module "bf", so that clients and dashboards that look for RedisBloom
// find it. Its path is the server's executable.
func writeModules(c wire.Conn) {
	path, _ := os.Executable()
	c.WriteArray(1)
	writeMap(c, 4)
	c.WriteBulkString("name")
	c.WriteBulkString("bf")
	c.WriteBulkString("ver")
	c.WriteInt(moduleVersion)
	c.WriteBulkString("path")
	c.WriteBulkString(path)
	c.WriteBulkString("args")
	c.WriteArray(0)
}

func cmdModule(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	switch sub := strings.ToLower(string(args[1])); {
	case sub != "list":
		c.WriteError("ERR MODULE " + clip(args[1], 32) + " is not supported by bloomkit serve (it has one built-in module, bf)")
	case len(args) != 2:
		c.WriteError("ERR wrong number of arguments for 'module|list' command")
	default:
		writeModules(c)
	}
}

// cmdMemory: MEMORY USAGE key [SAMPLES n]: the bytes of the key's filter
// file (mapped); null for a missing key.
func cmdMemory(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub != "usage":
		c.WriteError("ERR unknown subcommand '" + clip(args[1], 64) + "'. Try MEMORY HELP.")
		return
	case len(args) != 3 && len(args) != 5:
		c.WriteError("ERR wrong number of arguments for 'memory|usage' command")
		return
	case len(args) == 5 && !strings.EqualFold(string(args[3]), "samples"):
		c.WriteError("ERR syntax error")
		return
	}
	if checkName(args[2]) != nil {
		writeNull(c) // no key can have that name
		return
	}
	fi, err := os.Stat(s.pathOf(string(args[2])))
	if err != nil {
		writeNull(c)
		return
	}
	c.WriteInt64(fi.Size())
}

// infoMemory is INFO's memory section: the Go heap, the filter files
// mapped by the open keys, and the process's resident memory.
func (s *Server) infoMemory(b *strings.Builder) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var mapped uint64
	s.each(func(e *entry) {
		if ls, ok := e.acquire(); ok {
			mapped += ls.Value().f.Bytes()
			ls.Release()
		}
	})
	used := ms.HeapAlloc + mapped
	rss := residentBytes()
	for _, kv := range []struct {
		k string
		v uint64
	}{
		{"used_memory", used}, {"used_memory_rss", rss},
		{"used_memory_heap", ms.HeapAlloc}, {"used_memory_filters", mapped},
	} {
		fmt.Fprintf(b, "%s:%d\r\n%s_human:%s\r\n", kv.k, kv.v, kv.k, humanBytes(kv.v))
	}
	b.WriteString("maxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\nmem_allocator:go\r\n")
}

// humanBytes is Redis's form of a size: 1.28M, 32.00K, 200B.
func humanBytes(n uint64) string {
	f := float64(n)
	for _, u := range []string{"B", "K", "M", "G", "T"} {
		if f < 1024 || u == "T" {
			if u == "B" {
				return fmt.Sprintf("%dB", n)
			}
			return fmt.Sprintf("%.2f%s", f, u)
		}
		f /= 1024
	}
	return ""
}

// cmdFlush: FLUSHDB and FLUSHALL [ASYNC|SYNC] delete every key (as DEL),
// only on a server started with -enable-flush.
func cmdFlush(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) > 2 {
		c.WriteError("ERR syntax error")
		return
	}
	if len(args) == 2 && !strings.EqualFold(string(args[1]), "async") && !strings.EqualFold(string(args[1]), "sync") {
		c.WriteError("ERR syntax error")
		return
	}
	if !s.cfg.EnableFlush {
		c.WriteError("ERR " + strings.ToUpper(string(cl.lower)) + " is disabled on this server: it deletes every filter file in the folder (start bloomkit serve with -enable-flush to allow it)")
		return
	}
	names, err := s.names()
	if err != nil {
		c.WriteError("ERR " + err.Error())
		return
	}
	for _, n := range names {
		if _, err := s.remove([]byte(n)); err != nil {
			s.keyError(c, err)
			return
		}
		os.Remove(s.expiryPath(n))
	}
	s.log.Info("flushed", "keys", len(names))
	c.WriteString("OK")
}

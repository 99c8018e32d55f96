package serve

import (
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"strings"
)

// command is one command the server has, described once: every view of
// the commands (dispatch, AUTH's and -read-only's checks, MULTI's queue
// rules, the event loops' choice, COMMAND, COMMAND COUNT, COMMAND INFO and
// COMMAND DOCS) is derived from commandTable, as Redis derives its own
// from commands.def.
type command struct {
	name string // lower case
	// arity is the number of arguments, the name included, as Redis
	// reports it: n exactly, or -n for at least n. RedisBloom registers
	// its commands with -1 and checks their arguments when they run.
	arity int
	// flags are COMMAND's: write, readonly, denyoom, admin, noauth, fast,
	// loading, stale, noscript. "write" is what -read-only refuses,
	// "noauth" what a client may send before AUTH.
	flags []string
	// first, last and step are the key positions (0: no key; last -1:
	// every argument from first on).
	first, last, step int
	// group, since and summary are COMMAND DOCS's; RedisBloom's commands
	// are in the group "module", of the module "bf", as RedisBloom
	// reports them.
	group, since, summary string
	// now: a transaction runs it at once instead of queuing it.
	now bool
	// loop: an event loop runs it (a lookup, or a command that answers at
	// once; none waits for another client or the disk).
	loop bool
	run  cmdFunc
}

// Flags of the table, by their COMMAND names.
var (
	// RedisBloom's, as its module registers them.
	fWrite = []string{"write", "denyoom", "module"}
	fRead  = []string{"readonly", "module", "fast"}

	fReadFast = []string{"readonly", "fast"}
	fFast     = []string{"fast"}
	fNoAuth   = []string{"noauth", "fast"}
	fAdmin    = []string{"admin"}
	fLoading  = []string{"loading"}
	fTx       = []string{"noscript", "loading", "stale", "fast"}
)

// commandTable is every command the server answers; docs/serve.md lists
// them (a test checks the list against this table). It is set by init:
// COMMAND's handler reads it.
var commandTable []command

func init() {
	commandTable = []command{
		{name: "bf.reserve", arity: -1, flags: fWrite, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Creates a new Bloom Filter", run: cmdReserve},
		{name: "bf.add", arity: -1, flags: fWrite, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Adds an item to a Bloom Filter", run: cmdAdd},
		{name: "bf.madd", arity: -1, flags: fWrite, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", run: cmdMAdd},
		{name: "bf.insert", arity: -1, flags: fWrite, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", run: cmdInsert},
		{name: "bf.exists", arity: -1, flags: fRead, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Checks whether an item exists in a Bloom Filter", loop: true, run: cmdExists},
		{name: "bf.mexists", arity: -1, flags: fRead, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Checks whether one or more items exist in a Bloom Filter", loop: true, run: cmdMExists},
		{name: "bf.info", arity: -1, flags: fRead, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Returns information about a Bloom Filter", run: cmdInfoBF},
		{name: "bf.card", arity: -1, flags: fRead, first: 1, last: 1, step: 1, group: "module", since: "2.4.4", summary: "Returns the cardinality of a Bloom filter", run: cmdCard},
		{name: "bf.scandump", arity: -1, flags: fRead, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Begins an incremental save of the bloom filter", run: cmdScanDump},
		{name: "bf.loadchunk", arity: -1, flags: fWrite, first: 1, last: 1, step: 1, group: "module", since: "1.0.0", summary: "Restores a filter previously saved using SCANDUMP", run: cmdLoadChunk},

		{name: "ping", arity: -1, flags: fFast, group: "connection", since: "1.0.0", summary: "Returns the server's liveliness response.", loop: true, run: cmdPing},
		{name: "echo", arity: 2, flags: fFast, group: "connection", since: "1.0.0", summary: "Returns the given string.", loop: true, run: cmdEcho},
		{name: "hello", arity: -1, flags: fNoAuth, group: "connection", since: "6.0.0", summary: "Handshakes with the Redis server.", run: cmdHello},
		{name: "auth", arity: -2, flags: fNoAuth, group: "connection", since: "1.0.0", summary: "Authenticates the connection.", run: cmdAuth},
		{name: "select", arity: 2, flags: fFast, group: "connection", since: "1.0.0", summary: "Changes the selected database (0 only).", run: cmdSelect},
		{name: "client", arity: -2, flags: fAdmin, group: "connection", since: "2.4.0", summary: "A container for client connection commands.", run: cmdClient},
		{name: "quit", arity: -1, flags: fNoAuth, group: "connection", since: "1.0.0", summary: "Closes the connection.", now: true, run: cmdQuit},

		{name: "command", arity: -1, flags: fLoading, group: "server", since: "2.8.13", summary: "Returns detailed information about all commands.", run: cmdCommand},
		{name: "info", arity: -1, flags: fLoading, group: "server", since: "1.0.0", summary: "Returns information and statistics about the server.", run: cmdInfo},
		{name: "dbsize", arity: 1, flags: fReadFast, group: "server", since: "1.0.0", summary: "Returns the number of keys in the database.", run: cmdDBSize},
		{name: "config", arity: -2, flags: fAdmin, group: "server", since: "2.0.0", summary: "A container for server configuration commands.", run: cmdConfig},
		{name: "module", arity: -2, flags: fAdmin, group: "server", since: "4.0.0", summary: "A container for module commands (LIST).", run: cmdModule},
		{name: "memory", arity: -2, flags: fRead, group: "server", since: "4.0.0", summary: "A container for memory diagnostics commands (USAGE).", run: cmdMemory},
		{name: "flushdb", arity: -1, flags: []string{"write"}, group: "server", since: "1.0.0", summary: "Removes all keys (only with -enable-flush).", run: cmdFlush},
		{name: "flushall", arity: -1, flags: []string{"write"}, group: "server", since: "1.0.0", summary: "Removes all keys (only with -enable-flush).", run: cmdFlush},
		{name: "shutdown", arity: -1, flags: []string{"admin", "noscript", "loading", "stale"}, group: "server", since: "1.0.0", summary: "Syncs every filter and stops the server, as SIGTERM does.", run: cmdShutdown},

		{name: "exists", arity: -2, flags: fReadFast, first: 1, last: -1, step: 1, group: "generic", since: "1.0.0", summary: "Determines whether one or more keys exist.", run: cmdExistsKeys},
		{name: "type", arity: 2, flags: fReadFast, first: 1, last: 1, step: 1, group: "generic", since: "1.0.0", summary: "Determines the type of value stored at a key.", run: cmdType},
		{name: "del", arity: -2, flags: []string{"write"}, first: 1, last: -1, step: 1, group: "generic", since: "1.0.0", summary: "Deletes one or more keys.", run: cmdDel},
		{name: "unlink", arity: -2, flags: []string{"write", "fast"}, first: 1, last: -1, step: 1, group: "generic", since: "4.0.0", summary: "Deletes one or more keys.", run: cmdDel},
		{name: "keys", arity: 2, flags: fRead, group: "generic", since: "1.0.0", summary: "Returns all key names that match a pattern.", run: cmdKeys},
		{name: "scan", arity: -2, flags: fRead, group: "generic", since: "2.8.0", summary: "Iterates over the key names in the database.", run: cmdScan},
		{name: "rename", arity: 3, flags: []string{"write"}, first: 1, last: 2, step: 1, group: "generic", since: "1.0.0", summary: "Renames a key and overwrites the destination.", run: cmdRename},
		{name: "renamenx", arity: 3, flags: []string{"write", "fast"}, first: 1, last: 2, step: 1, group: "generic", since: "1.0.0", summary: "Renames a key only when the target key name doesn't exist.", run: cmdRename},
		{name: "expire", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, group: "generic", since: "1.0.0", summary: "Sets the expiration time of a key in seconds.", run: cmdExpire},
		{name: "pexpire", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, group: "generic", since: "2.6.0", summary: "Sets the expiration time of a key in milliseconds.", run: cmdExpire},
		{name: "expireat", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, group: "generic", since: "1.2.0", summary: "Sets the expiration time of a key to a Unix timestamp.", run: cmdExpire},
		{name: "pexpireat", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, group: "generic", since: "2.6.0", summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.", run: cmdExpire},
		{name: "ttl", arity: 2, flags: fReadFast, first: 1, last: 1, step: 1, group: "generic", since: "1.0.0", summary: "Returns the expiration time in seconds of a key.", run: cmdTTL},
		{name: "pttl", arity: 2, flags: fReadFast, first: 1, last: 1, step: 1, group: "generic", since: "2.6.0", summary: "Returns the expiration time in milliseconds of a key.", run: cmdTTL},
		{name: "persist", arity: 2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, group: "generic", since: "2.2.0", summary: "Removes the expiration time of a key.", run: cmdPersist},

		{name: "multi", arity: 1, flags: fTx, group: "transactions", since: "1.2.0", summary: "Starts a transaction.", now: true, run: cmdMulti},
		{name: "exec", arity: 1, flags: []string{"noscript", "loading", "stale"}, group: "transactions", since: "1.2.0", summary: "Executes all commands in a transaction.", now: true, run: cmdExec},
		{name: "discard", arity: 1, flags: fTx, group: "transactions", since: "2.0.0", summary: "Discards a transaction.", now: true, run: cmdDiscard},
		{name: "watch", arity: -2, flags: fTx, first: 1, last: -1, step: 1, group: "transactions", since: "2.2.0", summary: "Monitors changes to keys (refused: see docs/serve.md).", now: true, run: cmdWatch},
		{name: "unwatch", arity: 1, flags: fTx, group: "transactions", since: "2.2.0", summary: "Forgets about watched keys of a transaction.", run: cmdUnwatch},
	}
	index()
}

// The views of commandTable, made once.
var (
	// commands maps a lower-case name to its command (dispatch).
	commands = map[string]*command{}
	// loopNames are the commands an event loop runs (loopCommand).
	loopNames []string
)

// index makes the views of commandTable.
func index() {
	for i := range commandTable {
		c := &commandTable[i]
		commands[c.name] = c
		if c.loop {
			loopNames = append(loopNames, c.name)
		}
	}
}

// has reports whether c has the COMMAND flag f.
func (c *command) has(f string) bool {
	for _, g := range c.flags {
		if g == f {
			return true
		}
	}
	return false
}

// noAuth reports whether a client may send c before AUTH.
func (c *command) noAuth() bool { return c != nil && c.has("noauth") }

// writes reports whether c writes (refused on a -read-only server).
func (c *command) writes() bool { return c != nil && c.has("write") }

// loopCommand reports whether an event loop runs the command of this
// lower-case name: a short list compared in place, as the switch it
// replaces (no map lookup on the request path).
func loopCommand(lower []byte) bool {
	for _, n := range loopNames {
		if string(lower) == n {
			return true
		}
	}
	return false
}

// queueArity is Redis's arity check at queue time, for the Redis commands
// (RedisBloom's commands check their arguments when they run, so their
// errors are elements of EXEC's array, as with RedisBloom).
func queueArity(c *command, n int) string {
	if c.group == "module" || (c.arity > 0 && n == c.arity) || (c.arity < 0 && n >= -c.arity) {
		return ""
	}
	return "ERR wrong number of arguments for '" + c.name + "' command"
}

// cmdCommand: COMMAND, COMMAND COUNT, COMMAND INFO [name...], COMMAND
// DOCS [name...], from commandTable.
func cmdCommand(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) == 1 {
		c.WriteArray(len(commandTable))
		for i := range commandTable {
			writeCommandInfo(c, &commandTable[i])
		}
		return
	}
	switch strings.ToLower(string(args[1])) {
	case "count":
		c.WriteInt(len(commandTable))
	case "info":
		if len(args) == 2 {
			c.WriteArray(len(commandTable))
			for i := range commandTable {
				writeCommandInfo(c, &commandTable[i])
			}
			return
		}
		c.WriteArray(len(args) - 2)
		for _, a := range args[2:] {
			if t := commands[strings.ToLower(string(a))]; t != nil {
				writeCommandInfo(c, t)
			} else {
				writeNull(c)
			}
		}
	case "docs":
		var docs []*command
		if len(args) == 2 {
			for i := range commandTable {
				docs = append(docs, &commandTable[i])
			}
		}
		for _, a := range args[2:] {
			if t := commands[strings.ToLower(string(a))]; t != nil {
				docs = append(docs, t)
			}
		}
		writeMap(c, len(docs))
		for _, t := range docs {
			c.WriteBulkString(t.name)
			if t.group == "module" {
				writeMap(c, 4)
			} else {
				writeMap(c, 3)
			}
			c.WriteBulkString("summary")
			c.WriteBulkString(t.summary)
			c.WriteBulkString("since")
			c.WriteBulkString(t.since)
			c.WriteBulkString("group")
			c.WriteBulkString(t.group)
			if t.group == "module" {
				c.WriteBulkString("module")
				c.WriteBulkString("bf")
			}
		}
	default:
		c.WriteError("ERR unknown subcommand '" + clip(args[1], 64) + "'. Try COMMAND HELP.")
	}
}

// writeCommandInfo writes COMMAND's entry of t: name, arity, flags, first
// key, last key, step, ACL categories (none).
func writeCommandInfo(c wire.Conn, t *command) {
	c.WriteArray(7)
	c.WriteBulkString(t.name)
	c.WriteInt(t.arity)
	c.WriteArray(len(t.flags))
	for _, f := range t.flags {
		c.WriteString(f)
	}
	c.WriteInt(t.first)
	c.WriteInt(t.last)
	c.WriteInt(t.step)
	c.WriteArray(0)
}

// cmdShutdown: SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] stops the server as
// SIGTERM does (every filter synced and sealed, exit 0); like Redis, it
// answers nothing when it stops: the connection closes.
func cmdShutdown(s *Server, c wire.Conn, cl *client, args [][]byte) {
	for _, a := range args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave", "save", "now", "force":
		case "abort":
			c.WriteError("ERR No shutdown in progress.")
			return
		default:
			c.WriteError("ERR syntax error")
			return
		}
	}
	s.log.Info("SHUTDOWN requested", "client", c.RemoteAddr())
	go s.Shutdown() // it waits for the running commands, this one included
}

// Package serve is the server of `bloomkit serve`: it answers RedisBloom's
// BF.* commands over RESP from the filter files of one folder, each file
// DIR/NAME.bloom being the key NAME, served through mmapstore.Live so that a
// build published over a file is picked up without a failed or wrong answer.
// docs/serve.md describes the commands, the differences from RedisBloom, the
// limits and the durability of writes.
package serve

import (
	"context"
	"errors"
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"github.com/bloomkit/bloomkit/filterfile"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Config is everything `bloomkit serve` takes from its flags.
type Config struct {
	Dir  string // the folder of filter files (required)
	Addr string // host:port to listen on

	Password string // AUTH password; "" means none

	FsyncInterval time.Duration // how often written filters are synced
	WatchInterval time.Duration // how often DIR is rescanned for publishes
	IdleTimeout   time.Duration // a client idle this long is closed; 0: never
	// EventLoops serve the connections whose commands are lookups
	// (evloop_linux.go): a read and a write a pipeline. 0: none, every
	// connection has a goroutine; below 0: one per GOMAXPROCS. Linux
	// only; not with IdleTimeout.
	EventLoops int

	MaxClients     int    // connections served at once
	MaxArgs        int    // arguments in one command
	MaxBulk        int    // bytes in one argument
	MaxCommand     int    // bytes in one command
	MaxPending     int64  // bytes of unfinished commands held for all clients together
	MaxFilterBytes uint64 // size of a filter the server creates or grows
	MaxDirBytes    uint64 // filter files in DIR together, for creates; 0: no limit
	JournalBytes   uint64 // keys kept per written filter to replay into a publish

	FixedVariant string // variant of NONSCALING filters: partitioned, standard, counting
	DefaultCap   uint64 // capacity of a filter BF.ADD creates
	DefaultRate  float64

	Logger *slog.Logger // nil: a text logger on stderr

	// MaxOpenKeys bounds the keys open at once (a descriptor and a mapping
	// each): the least recently used beyond it are closed, and reopened by
	// their next command. 0: DefaultMaxOpenKeys. At most half of
	// RLIMIT_NOFILE in any case.
	MaxOpenKeys int

	WALConfig // durability of writes (wal.go)

	// ReadOnly refuses every write (READONLY, as a Redis replica) and
	// opens no file for writing (-read-only; issue 31).
	ReadOnly bool
	// EnableFlush allows FLUSHDB and FLUSHALL (-enable-flush).
	EnableFlush bool
}

// Defaults returns the configuration `bloomkit serve` starts from.
func Defaults() Config {
	return Config{
		Addr:           "127.0.0.1:6379",
		FsyncInterval:  time.Second,
		WatchInterval:  time.Second,
		IdleTimeout:    0,
		EventLoops:     -1,
		MaxClients:     10000,
		MaxArgs:        1 << 20,
		MaxBulk:        1 << 20,
		MaxCommand:     64 << 20,
		MaxPending:     256 << 20,
		MaxFilterBytes: 4 << 30,
		JournalBytes:   64 << 20,
		FixedVariant:   filterfile.Default(filterfile.ServeFixed).Name,
		DefaultCap:     100,
		DefaultRate:    0.01,
	}
}

// Server serves one folder of filter files.
type Server struct {
	cfg   Config
	fixed mmapstore.Variant
	log   *slog.Logger
	conns connSet // the connections served (respconn.go)
	ln    net.Listener
	start time.Time

	mu   sync.Mutex // guards changes to keys (creates, opens, drops)
	keys keyMap

	openLimitOnce sync.Once
	openLimit     int64

	retMu   sync.Mutex
	retired []retiredLive

	refMu    sync.Mutex
	refLog   map[string]string
	errLimit rateLimit

	stats   stats
	store   storeStats // write-ahead logs and checkpoints (wal.go)
	clients atomic.Int64
	pending budget // unfinished commands the guards hold (-max-pending)

	refused refusals // rate limits of repeating refusals' log lines

	// running counts the reads whose commands are executing, striped by
	// connection; stopping is set once the stop began, after which no
	// command starts (see enter and Shutdown).
	running  stripedCount
	stopping atomic.Bool

	ctx      context.Context // done at Shutdown
	stop     context.CancelFunc
	runMu    sync.Mutex // orders the start of the loops before Shutdown's wait
	loops    sync.WaitGroup
	shutOnce sync.Once

	evLoops []*evLoop // (evloop_linux.go), set before the first accept

	x ext // issue 31's state: clients, expiries (admin_clients.go)
}

type stats struct {
	conns, rejected, protoErrs          atomic.Uint64
	authFails                           atomic.Uint64 // AUTH refused (INFO rejected_auth)
	hits, misses, swaps, refused, syncs atomic.Uint64
	syncErrs                            atomic.Uint64
	loopClients                         atomic.Int64  // connections an event loop serves now
	loopHandoffs                        atomic.Uint64 // connections a loop handed to a goroutine
	commands, netIn                     stripedCount  // added to per read
}

// New checks cfg and listens on cfg.Addr; Serve then answers clients.
func New(cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("missing -dir DIR: the folder of filter files to serve")
	}
	fi, err := os.Stat(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "serve", Path: cfg.Dir, Err: errors.New("not a directory")}
	}
	fixed, err := variantByName(cfg.FixedVariant)
	if err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, fixed: fixed, log: cfg.Logger, start: time.Now(), refLog: map[string]string{}}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s.errLimit.every = time.Second / 10
	s.pending.max = cfg.MaxPending
	s.fitClients(nofileLimit())
	s.ctx, s.stop = context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s.ln = &guardListener{Listener: ln, s: s}
	return s, nil
}

// reservedFDs are the descriptors kept for other uses than clients (the
// listener, filter files, logs), as Redis keeps 32.
const reservedFDs = 32

// fitClients lowers -max-clients to what the descriptor limit allows, as
// Redis does, so that a client over it gets "max number of clients
// reached" instead of hanging in an accept that fails with EMFILE.
func (s *Server) fitClients(nofile uint64) {
	if nofile == 0 || uint64(s.cfg.MaxClients)+reservedFDs <= nofile {
		return
	}
	n := max(int(min(nofile, 1<<30))-reservedFDs, 1)
	s.log.Warn("-max-clients lowered to fit the descriptor limit; raise ulimit -n for more",
		"max_clients", n, "asked", s.cfg.MaxClients, "nofile", nofile, "reserved", reservedFDs)
	s.cfg.MaxClients = n
}

func (c *Config) check() error {
	if err := c.WALConfig.check(); err != nil {
		return err
	}
	switch {
	case c.FsyncInterval <= 0:
		return fmt.Errorf("-fsync-interval %v: want a positive duration", c.FsyncInterval)
	case c.WatchInterval <= 0:
		return fmt.Errorf("-watch-interval %v: want a positive duration", c.WatchInterval)
	case c.MaxClients < 1, c.MaxArgs < 3, c.MaxBulk < 64, c.MaxCommand < c.MaxBulk:
		return fmt.Errorf("limits too small: -max-clients >= 1, -max-args >= 3, -max-bulk >= 64, -max-command >= -max-bulk")
	case c.MaxPending < int64(c.MaxCommand):
		return fmt.Errorf("-max-pending %d: want at least -max-command (%d), or no client could send a command that large", c.MaxPending, c.MaxCommand)
	case !(c.DefaultRate > 0 && c.DefaultRate < 1) || c.DefaultCap == 0:
		return fmt.Errorf("default filter: want a capacity >= 1 and a rate in (0,1)")
	}
	return nil
}

// Addr is the address the server listens on (useful with port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers clients until ctx is done or Shutdown is called, then
// syncs and closes every filter. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context) error {
	s.runMu.Lock()
	if s.ctx.Err() != nil { // Shutdown came first
		s.runMu.Unlock()
		return nil
	}
	s.loops.Add(2)
	if s.cfg.EventLoops != 0 && s.cfg.IdleTimeout == 0 {
		s.startEvLoops(s.cfg.EventLoops) // before Shutdown can look at them
	}
	s.runMu.Unlock()
	s.recoverUnsealed()
	s.log.Info("serving", "dir", s.cfg.Dir, "addr", s.Addr().String(), "fsync_interval", s.cfg.FsyncInterval,
		"auth", s.cfg.Password != "", "pid", os.Getpid())
	go s.every(s.ctx, s.cfg.FsyncInterval, s.syncAll)
	go s.every(s.ctx, s.cfg.WatchInterval, s.rescan)
	errc := make(chan error, 1)
	go func() { errc <- s.serveConns(s.ln) }()
	var err error
	select {
	case <-ctx.Done():
	case <-s.ctx.Done():
	case err = <-errc:
	}
	s.Shutdown()
	return err
}

// Shutdown stops accepting clients, closes the connections, syncs every
// written filter and closes (seals) it. It may be called at any time, more
// than once, and from another goroutine than Serve's.
func (s *Server) Shutdown() {
	s.shutOnce.Do(func() {
		// No command starts from here on; those running finish before
		// the filters are synced and sealed, so nothing is created or
		// acknowledged after the seal pass.
		s.stopping.Store(true)
		for s.running.Load() != 0 {
			time.Sleep(time.Millisecond)
		}
		s.runMu.Lock()
		s.stop() // no loop starts after this
		s.runMu.Unlock()
		s.ln.Close()
		s.conns.closeAll()
		for _, l := range s.evLoops {
			l.stop()
		}
		s.loops.Wait()
		s.each(func(e *entry) {
			e.wmu.Lock()
			s.stopFollowing(e)
			if err := s.syncEntry(e); err != nil {
				s.log.Error("sync failed at shutdown", "key", e.name, "err", err)
			}
			s.retire(e.cur.Swap(nil))
			e.wmu.Unlock()
		})
		s.closeRetired(true)
		s.log.Info("stopped", "commands", s.stats.commands.Load(), "connections", s.stats.conns.Load())
	})
}

// enter admits the commands of one read of the connection of the given
// stripe unless the stop began; leave must follow an admitted one. A
// command admitted is counted before the stop flag is read, and Shutdown
// sets the flag before it sums the counts: either Shutdown waits for the
// command, or the command sees the flag.
func (s *Server) enter(stripe uint32) bool {
	s.running.add(stripe, 1)
	if s.stopping.Load() {
		s.running.add(stripe, -1)
		return false
	}
	return true
}

func (s *Server) leave(stripe uint32) { s.running.add(stripe, -1) }

// refuseStopping answers a command that arrived after the stop began (a
// pipeline's tail): an error, never an acknowledgement, and the
// connection is closed.
func (s *Server) refuseStopping(c wire.Conn) {
	c.WriteError("ERR server is shutting down; command not run")
	c.Close()
}

func (s *Server) every(ctx context.Context, d time.Duration, f func()) {
	defer s.loops.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

func (s *Server) syncAll() {
	s.each(func(e *entry) {
		if err := s.syncEntry(e); err != nil {
			if e.cur.Load() == nil {
				return // deleted or closed meanwhile: nothing to make durable
			}
			s.stats.syncErrs.Add(1)
			s.logRefusal(slog.LevelError, "sync failed", "key", e.name, "err", err)
		}
	})
}

// rescan picks up publishes and removals of the files being served.
func (s *Server) rescan() {
	s.closeRetired(false)
	s.each(func(e *entry) {
		if e.writable.Load() || e.followed.Load() {
			s.checkWriter(e)
			return
		}
		// Under the write lock, which the switch to writing holds: a Live
		// of a file open for writing is not reloaded as a read-only one.
		if !e.wmu.TryLock() {
			return // busy: the next rescan
		}
		defer e.wmu.Unlock()
		l := e.cur.Load()
		if l == nil || e.writable.Load() {
			return
		}
		swapped, err := l.Reload()
		switch {
		case swapped:
			e.swaps.Add(1)
			s.stats.swaps.Add(1)
			s.log.Info("file swapped in", "key", e.name)
		case errors.Is(err, fs.ErrNotExist):
			s.log.Info("file removed; key dropped", "key", e.name)
			s.drop(e)
		case err != nil && !errors.Is(err, mmapstore.ErrClosed):
			s.refusedOnce(e.path, err)
		}
	})
}

// refusedOnce logs a file that cannot be served, once per distinct error.
func (s *Server) refusedOnce(path string, err error) {
	s.refMu.Lock()
	defer s.refMu.Unlock()
	if s.refLog[path] == err.Error() {
		return
	}
	s.refLog[path] = err.Error()
	s.stats.refused.Add(1)
	s.log.Error("file refused", "file", path, "err", err)
}

// rateLimit lets one log line through per interval and counts the rest.
type rateLimit struct {
	mu         sync.Mutex
	every      time.Duration
	last       time.Time
	suppressed int
}

func (r *rateLimit) allow() (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.last) < r.every {
		r.suppressed++
		return false, 0
	}
	n := r.suppressed
	r.last, r.suppressed = time.Now(), 0
	return true, n
}

func (s *Server) clientError(addr, what string) {
	if ok, skipped := s.errLimit.allow(); ok {
		s.log.Warn("client error", "client", addr, "err", what, "suppressed_since_last", skipped)
	}
}

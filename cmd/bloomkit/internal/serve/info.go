package serve

import (
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// cmdInfo: INFO [section ...]; sections server, clients, stats, keyspace
// and filters (one line per filter being served), all by default.
func cmdInfo(s *Server, c wire.Conn, cl *client, args [][]byte) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := len(want) == 0 || want["all"] || want["everything"] || want["default"]
	var b strings.Builder
	for _, sec := range []struct {
		name string
		f    func(*strings.Builder)
	}{
		{"server", s.infoServer}, {"clients", s.infoClients}, {"memory", s.infoMemory}, {"stats", s.infoStats},
		{"keyspace", s.infoKeyspace}, {"persistence", s.infoPersistence}, {"filters", s.infoFilters},
	} {
		if all || want[sec.name] {
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			fmt.Fprintf(&b, "# %s%s\r\n", strings.ToUpper(sec.name[:1]), sec.name[1:])
			sec.f(&b)
		}
	}
	writeVerbatim(c, b.String())
}

func (s *Server) infoServer(b *strings.Builder) {
	up := time.Since(s.start)
	fmt.Fprintf(b, "redis_version:%s\r\nserver_name:bloomkit\r\nredis_mode:standalone\r\n", redisVersion)
	fmt.Fprintf(b, "os:%s %s\r\narch_bits:64\r\ngo_version:%s\r\nprocess_id:%d\r\n", runtime.GOOS, runtime.GOARCH, runtime.Version(), os.Getpid())
	fmt.Fprintf(b, "tcp_port:%s\r\nuptime_in_seconds:%d\r\nuptime_in_days:%d\r\n", portOf(s.Addr().String()), int64(up.Seconds()), int64(up.Hours()/24))
	fmt.Fprintf(b, "dir:%s\r\nfsync_interval_ms:%d\r\nwatch_interval_ms:%d\r\n", s.cfg.Dir, s.cfg.FsyncInterval.Milliseconds(), s.cfg.WatchInterval.Milliseconds())
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return addr
}

func (s *Server) infoClients(b *strings.Builder) {
	fmt.Fprintf(b, "connected_clients:%d\r\nmaxclients:%d\r\n", s.clients.Load(), s.cfg.MaxClients)
	fmt.Fprintf(b, "event_loops:%d\r\nevent_loop_clients:%d\r\nevent_loop_handoffs:%d\r\n",
		len(s.evLoops), s.stats.loopClients.Load(), s.stats.loopHandoffs.Load())
}

func (s *Server) infoStats(b *strings.Builder) {
	st := &s.stats
	for _, kv := range []struct {
		k string
		v uint64
	}{
		{"total_connections_received", st.conns.Load()},
		{"rejected_connections", st.rejected.Load()},
		{"total_commands_processed", st.commands.Load()},
		{"total_net_input_bytes", st.netIn.Load()},
		{"protocol_errors", st.protoErrs.Load()},
		{"rejected_auth", st.authFails.Load()},
		{"acl_access_denied_auth", st.authFails.Load()}, // Redis 7's name
		{"keyspace_hits", s.sumHits(true)},
		{"keyspace_misses", s.sumHits(false) + st.misses.Load()},
		{"filter_swaps", st.swaps.Load()},
		{"filter_files_refused", st.refused.Load()},
		{"filter_syncs", st.syncs.Load()},
		{"filter_sync_errors", st.syncErrs.Load()},
	} {
		fmt.Fprintf(b, "%s:%d\r\n", kv.k, kv.v)
	}
}

func (s *Server) sumHits(hits bool) uint64 {
	var n uint64
	for _, e := range s.keySnapshot() {
		if hits {
			n += e.hits.Load()
		} else {
			n += e.misses.Load()
		}
	}
	return n
}

func (s *Server) infoKeyspace(b *strings.Builder) {
	if names, err := s.names(); err == nil && len(names) > 0 {
		fmt.Fprintf(b, "db0:keys=%d,expires=0,avg_ttl=0\r\n", len(names))
	}
}

// infoFilters writes one line per filter being served: variant, mode,
// size, items, and the lookups, hits and swaps counted since start.
func (s *Server) infoFilters(b *strings.Builder) {
	m := s.keySnapshot()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := m[n]
		ls, ok := e.acquire()
		if !ok {
			continue
		}
		h := ls.Value()
		mode := "read"
		if h.writable {
			mode = "write"
		}
		fmt.Fprintf(b, "filter:name=%s,variant=%s,mode=%s,bytes=%d,capacity=%d,items=%d,stages=%d,hits=%d,misses=%d,swaps=%d,"+
			"log_bytes=%d,last_fsync_ms=%d,last_checkpoint_ms=%d,replayed=%d,replay_ms=%d\r\n",
			infoSafe(n), h.variant, mode, h.f.Bytes(), h.f.Capacity(), h.f.Added(), h.stages(),
			e.hits.Load(), e.misses.Load(), e.swaps.Load(),
			h.logBytes(), unixMs(e.ck.lastSync.Load()), unixMs(e.ck.lastCheckpoint.Load()),
			e.ck.replayed.Load(), time.Duration(e.ck.replayNanos.Load()).Milliseconds())
		ls.Release()
	}
}

// infoSafe keeps a key name from breaking the line format of INFO.
func infoSafe(n string) string {
	return strings.NewReplacer(",", "%2C", "=", "%3D", "\r", "", "\n", "").Replace(n)
}

// infoPersistence writes the figures of the write-ahead logs: the fsync
// mode, the bytes of the logs of the keys open now, when the last fsync
// began (every add acknowledged before it is durable) and the last
// checkpoint ended (unix ms, 0: never), the checkpoints since start, and
// the digests replayed at start and how long that took.
func (s *Server) infoPersistence(b *strings.Builder) {
	var logBytes uint64
	s.each(func(e *entry) {
		if ls, ok := e.acquire(); ok {
			logBytes += ls.Value().logBytes()
			ls.Release()
		}
	})
	mode := s.cfg.Fsync
	if mode == "" {
		mode = "everysec"
	}
	fmt.Fprintf(b, "wal_fsync:%s\r\nwal_log_bytes:%d\r\nwal_last_fsync_unix_ms:%d\r\nwal_last_checkpoint_unix_ms:%d\r\nwal_checkpoints:%d\r\n",
		mode, logBytes, unixMs(s.store.lastSync.Load()), unixMs(s.store.lastCheckpoint.Load()), s.store.checkpoints.Load())
	fmt.Fprintf(b, "wal_replayed_digests_at_start:%d\r\nwal_replay_ms_at_start:%d\r\n",
		s.store.replayed.Load(), time.Duration(s.store.replayNanos.Load()).Milliseconds())
}

// unixMs turns unix nanoseconds into milliseconds (0 stays 0: never).
func unixMs(ns int64) int64 { return ns / int64(time.Millisecond) }

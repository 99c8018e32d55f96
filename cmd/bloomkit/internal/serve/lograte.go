package serve

import (
	"log/slog"
	"sync"
	"time"
)

// refusalEvery is the interval between two log lines of one kind of
// repeating refusal (an add refused, a sync failed): the lines between are
// counted and the next line says how many were suppressed.
const refusalEvery = time.Second / 10

// refusals holds one rateLimit per message of logRefusal.
type refusals struct {
	mu     sync.Mutex
	limits map[string]*rateLimit
}

func (r *refusals) limit(msg string) *rateLimit {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.limits[msg]
	if l == nil {
		if r.limits == nil {
			r.limits = map[string]*rateLimit{}
		}
		l = &rateLimit{every: refusalEvery}
		r.limits[msg] = l
	}
	return l
}

// logRefusal logs a refusal that can repeat as fast as clients send
// commands (issue 36: 256,806 lines in 8 s from 2 clients) at a bounded
// rate: at most one line per message per refusalEvery, with the count of
// lines suppressed since the previous one. msg must be a constant.
func (s *Server) logRefusal(level slog.Level, msg string, args ...any) {
	ok, skipped := s.refused.limit(msg).allow()
	if !ok {
		return
	}
	s.log.Log(s.ctx, level, msg, append(args, "suppressed_since_last", skipped)...)
}

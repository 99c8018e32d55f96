package redisstore

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ParseURL reads a filter URL: a Redis URL as go-redis reads it, plus the
// filter's name in the query parameter "name" and, for a Redis Cluster,
// "cluster=true" (more seed nodes in "addr" parameters):
//
//	redis://[user:password@]host:port[/db]?name=NAME
//	rediss://host:port?name=NAME&dial_timeout=3s
//	redis://host:7000?name=NAME&cluster=true&addr=host:7001&addr=host:7002
//
// It returns a client the caller closes, and the name. Anything unreadable
// is ErrURL. The client honours the deadline of every call's context (a
// call on a server that stopped answering returns when its context ends,
// not after the client's read timeout).
func ParseURL(raw string) (redis.UniversalClient, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrURL, err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, "", fmt.Errorf("%w: %q: scheme %q, want redis or rediss", ErrURL, redact(u), u.Scheme)
	}
	q := u.Query()
	name := q.Get("name")
	if name == "" {
		return nil, "", fmt.Errorf("%w: %q: no filter name (add ?name=NAME)", ErrURL, redact(u))
	}
	if err := checkName(name); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrURL, err)
	}
	cluster := false
	if s := q.Get("cluster"); s != "" {
		if cluster, err = strconv.ParseBool(s); err != nil {
			return nil, "", fmt.Errorf("%w: %q: cluster=%q is not a boolean", ErrURL, redact(u), s)
		}
	}
	q.Del("name")
	q.Del("cluster")
	u.RawQuery = q.Encode()
	if cluster {
		opts, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, "", fmt.Errorf("%w: %q: %v", ErrURL, redact(u), err)
		}
		opts.ContextTimeoutEnabled = true
		return redis.NewClusterClient(opts), name, nil
	}
	if q.Has("addr") {
		return nil, "", fmt.Errorf("%w: %q: addr parameters need cluster=true", ErrURL, redact(u))
	}
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, "", fmt.Errorf("%w: %q: %v", ErrURL, redact(u), err)
	}
	opts.ContextTimeoutEnabled = true
	return redis.NewClient(opts), name, nil
}

// redact returns u without its password, for error messages.
func redact(u *url.URL) string { return u.Redacted() }

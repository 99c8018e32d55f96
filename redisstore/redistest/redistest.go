// Package redistest starts throwaway redis-server processes for tests: one
// standalone server, or a small Redis Cluster of masters, each on a free
// loopback port (127.0.0.1 only) with its files in a folder of the caller's,
// and stops them again.
//
// Tests that share one server call Main from TestMain: when redis-server is
// not on PATH that is an error, unless the environment variable named by
// SkipEnv is set to 1, in which case the Redis tests skip. CI installs redis-server,
// so there a missing server fails the run.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// SkipEnv names the environment variable that, set to 1, lets the Redis
// tests skip when redis-server is not installed. Without it they fail.
const SkipEnv = "BLOOMKIT_SKIP_REDIS"

// ErrNoServer: redis-server (or redis-cli, for a cluster) is not on PATH.
var ErrNoServer = errors.New("redistest: redis-server not found on PATH (apt-get install redis-server, or set " + SkipEnv + "=1 to skip the Redis tests)")

// Available reports whether redis-server and redis-cli can be run. When
// they cannot and SkipEnv is 1, skip is true: the caller should skip its
// Redis tests rather than fail them.
func Available() (skip bool, err error) {
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return os.Getenv(SkipEnv) == "1", fmt.Errorf("%w: %s: %v", ErrNoServer, bin, err)
		}
	}
	return false, nil
}

// Server is one running redis-server.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int
	Dir  string
	cmd  *exec.Cmd
	done chan error
	log  string
}

// startTimeout bounds how long a server may take to answer its first PING.
const startTimeout = 10 * time.Second

// Start runs a redis-server on a free loopback port with its files in a new
// folder under dir, and waits until it answers. extra are more config lines
// in "name value" form (cluster-enabled yes, ...).
func Start(dir string, extra ...string) (*Server, error) {
	if _, err := Available(); err != nil {
		return nil, err
	}
	var last error
	for try := 0; try < 5; try++ { // a free port can be taken before we bind it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := startOn(dir, port, extra)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

// freePort returns a loopback port that is free now, and whose cluster bus
// port (port + 10000) is free too.
func freePort() (int, error) {
	for i := 0; i < 100; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("redistest: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, errors.New("redistest: no free loopback port pair found")
}

func startOn(parent string, port int, extra []string) (*Server, error) {
	dir, err := os.MkdirTemp(parent, "redis-"+strconv.Itoa(port)+"-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	conf := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(port),
		"dir " + dir,
		`save ""`,
		"appendonly no",
		"daemonize no",
		"protected-mode yes",
		"logfile " + filepath.Join(dir, "redis.log"),
	}
	conf = append(conf, extra...)
	confPath := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(confPath, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	cmd := exec.Command("redis-server", confPath)
	cmd.Dir = dir
	setParentDeath(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redistest: start redis-server: %w", err)
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, cmd: cmd, done: make(chan error, 1), log: filepath.Join(dir, "redis.log")}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady() error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("redistest: redis-server on %s exited: %v%s", s.Addr, err, s.tail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s did not answer in %v: %v%s", s.Addr, startTimeout, err, s.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail returns the last lines of the server's log, for error messages.
func (s *Server) tail() string {
	f, err := os.Open(s.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 5 {
			lines = lines[1:]
		}
	}
	return "\n" + strings.Join(lines, "\n")
}

// Stop ends the server (SIGTERM, then SIGKILL after five seconds) and
// removes its folder.
func (s *Server) Stop() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.done <- nil // later Stops return at once
	s.cmd = nil
	return os.RemoveAll(s.Dir)
}

// Cluster is a Redis Cluster of masters without replicas, all on loopback.
type Cluster struct {
	Servers []*Server
}

// Addrs returns the masters' addresses.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		a[i] = s.Addr
	}
	return a
}

// StartCluster starts n (at least 3) cluster-enabled servers, joins them
// with redis-cli --cluster create, and waits until every node reports the
// cluster ok with all 16384 slots served.
func StartCluster(dir string, n int) (_ *Cluster, err error) {
	if n < 3 {
		return nil, fmt.Errorf("redistest: a cluster needs at least 3 masters, not %d", n)
	}
	c := &Cluster{}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	for i := 0; i < n; i++ {
		s, err := Start(dir, "cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 5000")
		if err != nil {
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	return c, c.waitOK()
}

func (c *Cluster) waitOK() error {
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range c.Servers {
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		for {
			info, err := cl.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") {
				break
			}
			if time.Now().After(deadline) {
				cl.Close()
				return fmt.Errorf("redistest: cluster node %s not ok: %v\n%s", s.Addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cl.Close()
	}
	return nil
}

// Stop ends every server of the cluster.
func (c *Cluster) Stop() error {
	var err error
	for _, s := range c.Servers {
		err = errors.Join(err, s.Stop())
	}
	return err
}

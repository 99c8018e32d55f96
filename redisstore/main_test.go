package redisstore

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkit/bloomkit/redisstore/redistest"
)

// server is the redis-server every test of the package shares (each test
// uses its own filter names); nil when redis-server is absent and
// redistest.SkipEnv opts out of the Redis tests.
var server *redistest.Server

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// quiet drops go-redis's log lines (dial failures that the tests provoke
// on purpose).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func runTests(m *testing.M) int {
	redis.SetLogger(quiet{})
	return redistest.Main(m, "redisstore-test-", &server)
}

// needRedis skips t when the Redis tests are opted out (see TestMain).
func needRedis(t testing.TB) {
	t.Helper()
	if server == nil {
		t.Skipf("redis-server not installed and %s=1", redistest.SkipEnv)
	}
}

// client returns a client of the shared server, closed when t ends.
func client(t testing.TB) *redis.Client {
	needRedis(t)
	c := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.:/-]`)

// filterName returns a name unique to test t.
func filterName(t testing.TB) string {
	return "test:" + unsafeName.ReplaceAllString(t.Name(), "_")
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

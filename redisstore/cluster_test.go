package redisstore

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/redisstore/redistest"
)

// TestCluster runs the filter against a Redis Cluster of three masters on
// loopback ports: segments spread over every node, batches are split by
// node, and push, query and pull round-trip.
func TestCluster(t *testing.T) {
	needRedis(t)
	t.Parallel()
	dir, err := os.MkdirTemp("", "redisstore-cluster-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	cl, err := redistest.StartCluster(dir, 3)
	require.NoError(t, err)
	defer cl.Stop()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	defer c.Close()
	ctx := testCtx(t)

	name := filterName(t)
	f, err := Create(ctx, c, name, 20000, 0.01, WithSegmentBytes(64*8))
	require.NoError(t, err)
	require.Greater(t, f.Segments(), 30)
	// Every master holds some segments.
	perNode := map[string]int{}
	var mu sync.Mutex
	err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		n := 0
		for i := range f.Segments() {
			ex, err := node.Exists(ctx, segmentKey(name, f.Generation(), uint64(i))).Result()
			if err != nil && !redis.HasErrorPrefix(err, "MOVED") {
				return err
			}
			n += int(ex)
		}
		mu.Lock()
		perNode[node.Options().Addr] = n
		mu.Unlock()
		return nil
	})
	require.NoError(t, err)
	require.Len(t, perNode, 3)
	total := 0
	for addr, n := range perNode {
		require.Greater(t, n, 0, "node %s holds no segment", addr)
		total += n
	}
	require.Equal(t, f.Segments(), total)

	ks := keys(0, 10000)
	added, err := f.AddMany(ctx, ks)
	require.NoError(t, err)
	require.GreaterOrEqual(t, added, len(ks)-maxFP(len(ks), 0.01))
	for _, k := range ks[:200] {
		isNew, err := f.Add(ctx, k)
		require.NoError(t, err)
		require.False(t, isNew)
	}
	found := make([]bool, len(ks))
	require.NoError(t, f.ContainsMany(ctx, ks, found))
	for i, ok := range found {
		require.True(t, ok, "key %d", i)
	}
	count, err := f.Added(ctx)
	require.NoError(t, err)
	require.EqualValues(t, added, count)

	testRoundTrip(t, ctx, c, name+":pushed")
	require.NoError(t, Delete(ctx, c, name))

	g, err := Create(ctx, c, name+":spread", 1000, 0.01, WithGrowth(2))
	require.NoError(t, err)
	nodes := map[string]bool{}
	for _, k := range g.st.Load().stages[0].seg {
		node, err := c.MasterForKey(ctx, k)
		require.NoError(t, err)
		nodes[node.Options().Addr] = true
	}
	require.Len(t, nodes, 3, "the shards of a stage spread over every master")

	// A growing filter fed by 4 clients at once: its stages' shards spread
	// over every master. 100,000 keys make 7 stages (TestGrowth covers the
	// rate with more keys on one server; -redis.soak adds 10^7 here too).
	t.Run("growth", func(t *testing.T) {
		testGrowth(t, func() redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
		}, name+":growing", growthKeys(100_000))
	})
}

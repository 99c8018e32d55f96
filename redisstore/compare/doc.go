// Package compare measures redisstore against go-zero's Redis Bloom filter
// (github.com/zeromicro/go-zero/core/bloom) on the same redis-server, in
// the same run: single Add and Contains calls, and redisstore's pipelined
// batches.
//
// It is a module of its own, outside go.work, so that go-zero and the many
// modules it requires never enter the module graph of redisstore's users
// (a test-only requirement in redisstore's go.mod would: module graph
// pruning keeps a dependency's listed requirements, and they take part in
// version selection). Run it with the workspace off:
//
//	cd redisstore/compare && GOWORK=off go test -run '^$' -bench . -benchtime 3s
//
// docs/redis.md has the results.
package compare

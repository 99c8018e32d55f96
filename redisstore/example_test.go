package redisstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkit/bloomkit/redisstore"
)

// Many processes share one filter: each opens it by name (the first
// creates it) and adds and tests keys. This example needs a Redis server on
// localhost:6379.
func Example() {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer c.Close()

	f, err := redisstore.AttachOrCreate(ctx, c, "seen-urls", 10_000_000, 0.001)
	if err != nil {
		log.Fatal(err)
	}
	isNew, err := f.AddString(ctx, "https://example.com/")
	if err != nil {
		log.Fatal(err) // Redis down: an error, never a wrong answer
	}
	fmt.Println("new:", isNew)

	urls := [][]byte{[]byte("https://example.com/"), []byte("https://example.org/")}
	found := make([]bool, len(urls))
	if err := f.ContainsMany(ctx, urls, found); err != nil { // one round trip
		log.Fatal(err)
	}
	fmt.Println(found)
}

// A filter built offline into a partitioned file is published to Redis in
// one step; clients attached to the previous one switch to it by
// themselves.
func ExamplePush() {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer c.Close()

	if err := redisstore.Push(ctx, c, "whitelist", "whitelist.bloom", redisstore.Replace()); err != nil {
		log.Fatal(err)
	}
	f, err := redisstore.Attach(ctx, c, "whitelist")
	if err != nil {
		log.Fatal(err)
	}
	ok, err := f.ContainsString(ctx, "alice@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ok)
}

// A crawler's seen-set whose final size nobody knows: the filter starts
// small and adds stages as workers add keys, keeping the rate below 1%.
// This example needs a Redis server on localhost:6379.
func ExampleWithGrowth() {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer c.Close()

	seen, err := redisstore.AttachOrCreate(ctx, c, "crawl:seen", 100_000, 0.01, redisstore.WithGrowth(2))
	if err != nil {
		log.Fatal(err)
	}
	isNew, err := seen.AddString(ctx, "https://example.com/a")
	if err != nil {
		log.Fatal(err) // ErrLimit past the limits, ErrRedis when Redis fails
	}
	if isNew {
		fmt.Println("crawl it; stages so far:", seen.NumStages())
	}
}

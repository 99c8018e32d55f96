package mmapstore

// The variants' packages register their layouts (filterfile.Register);
// this package's own tests, which cannot import them, register the same.
func init() {
	RegisterVariant(Standard, "standard", CellArray(1))
	RegisterVariant(Partitioned, "partitioned", CellArray(1, 512, 256))
	RegisterVariant(Counting, "counting", CellArray(4))
	RegisterVariant(Scalable, "scalable", StageTable)
	RegisterVariant(Fuse, "fuse", ShardTable)
	RegisterVariant(Growing, "growing", HistoryTable)
	RegisterVariant(Window, "window", WindowRing)
	RegisterVariant(Cuckoo, "cuckoo", CuckooTable)
	RegisterVariant(RedisBloomBF, "redisbloom-bf", RedisBloomChain)
	RegisterVariant(RedisBloomCF, "redisbloom-cf", RedisBloomCuckoo)
}

module github.com/bloomkit/bloomkit/redisstore

go 1.26.0

require github.com/bloomkit/bloomkit v0.0.0

replace github.com/bloomkit/bloomkit => ../

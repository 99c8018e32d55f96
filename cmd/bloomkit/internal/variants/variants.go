// Package variants links the variant packages of bloomkit's tool and its
// server: importing it (for its effect alone) registers each of them with
// package filterfile, whose descriptions (filterfile.Variant) are all the
// tool and the server know of a variant. A new variant is its package and
// its line here.
package variants

import (
	_ "github.com/bloomkit/bloomkit/counting"
	_ "github.com/bloomkit/bloomkit/cuckoo"
	_ "github.com/bloomkit/bloomkit/fuse"
	_ "github.com/bloomkit/bloomkit/growing"
	_ "github.com/bloomkit/bloomkit/partitioned"
	_ "github.com/bloomkit/bloomkit/redisbloom/bf"
	_ "github.com/bloomkit/bloomkit/scalable"
	_ "github.com/bloomkit/bloomkit/standard"
	_ "github.com/bloomkit/bloomkit/window"
)

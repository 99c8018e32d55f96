//go:build linux

package main

import (
	"strings"
	"testing"
)

// TestRepliesAcrossReads feeds replies split at every byte boundary: the
// counts must not depend on where a read ends, and anything but :0 or :1
// is an error.
func TestRepliesAcrossReads(t *testing.T) {
	in := ":1\r\n:0\r\n:1\r\n"
	for cut := 0; cut <= len(in); cut++ {
		c := &lconn{start: true, pending: 3}
		if err := c.replies([]byte(in[:cut])); err != nil {
			t.Fatal(err)
		}
		if err := c.replies([]byte(in[cut:])); err != nil {
			t.Fatal(err)
		}
		if c.pending != 0 || c.done != 3 || c.hits != 2 {
			t.Fatalf("cut at %d: pending %d, done %d, hits %d; want 0, 3, 2", cut, c.pending, c.done, c.hits)
		}
	}
	for _, bad := range []string{"-ERR no such key\r\n", ":2\r\n", "$1\r\n1\r\n"} {
		c := &lconn{start: true, pending: 1}
		if err := c.replies([]byte(bad)); err == nil {
			t.Errorf("%q: no error", strings.TrimSpace(bad))
		}
	}
	c := &lconn{start: true, pending: 1}
	if err := c.replies([]byte(":1\r\n:1\r\n")); err == nil {
		t.Error("a reply beyond the pipeline: no error")
	}
}

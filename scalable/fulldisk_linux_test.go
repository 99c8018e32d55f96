package scalable

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestCreateOnFullDisk creates filters on a 1 MiB tmpfs (or under
// RLIMIT_FSIZE): see filtertest.CreateOnFullDisk.
func TestCreateOnFullDisk(t *testing.T) { filtertest.CreateOnFullDisk(t, variant) }

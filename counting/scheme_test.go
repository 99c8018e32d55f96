package counting

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestScheme: new filters hash with scheme 2, files of scheme 1 keep it,
// the header's hash id follows the filter through streams and files, and
// unknown ids are refused (issue 13, item 1).
func TestScheme(t *testing.T) { filtertest.SchemeSuite(t, variant, goldenPath) }

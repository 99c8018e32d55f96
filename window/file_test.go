package window

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

func TestFileSuite(t *testing.T) { filtertest.RunFileSuite(t, variant) }

func TestAfterClose(t *testing.T) { filtertest.RunAfterClose(t, variant, nil) }

func TestFileErrors(t *testing.T) { filtertest.RunFileErrors(t, variant, "window") }

func TestStreamRoundTrip(t *testing.T) { filtertest.StreamRoundTrip(t, variant) }

func TestAddReportsNew(t *testing.T) { filtertest.AddReportsNew(t, variant) }

func TestRejectsBadArguments(t *testing.T) {
	filtertest.RejectsBadArguments(t, variant, 1<<59, 0) // 8·2^59 items: too large
}

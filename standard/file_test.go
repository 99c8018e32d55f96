package standard

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

func TestFileSuite(t *testing.T) { filtertest.RunFileSuite(t, variant) }

func TestAfterClose(t *testing.T) { filtertest.RunAfterClose(t, variant, afterClose) }

func TestFileErrors(t *testing.T) { filtertest.RunFileErrors(t, variant, "standard") }

package serve

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, name string
		want    bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"", "", true}, {"", "a", false},
		{"a*", "abc", true}, {"*c", "abc", true}, {"*b*", "abc", true}, {"*d*", "abc", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"???", "ab", false},
		{"h[ae]llo", "hello", true}, {"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true}, {"h[b-a]llo", "hallo", true}, {"h[a-b]llo", "hcllo", false},
		{`h\*llo`, "h*llo", true}, {`h\*llo`, "hello", false}, {`a\`, `a\`, true},
		{"[abc", "b", true}, {"user:*:name", "user:42:name", true}, {"user:*:name", "user:42:age", false},
		{"**a**", "xxa", true}, {"*a*a*c*?", strings.Repeat("a", 200), false},
	} {
		g := compileGlob(c.p)
		got, _ := g.match(c.name, nil)
		require.Equal(t, c.want, got, "%q %q", c.p, c.name)
	}
}

package serve

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelloAuthUser (issue 36 row 15): `HELLO 2 AUTH nobody <password>`
// authenticated (the user name was ignored) while `AUTH nobody <password>`
// was refused; now both refuse any user but default with Redis's error, and
// the connection stays unauthenticated.
func TestHelloAuthUser(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.Password = "pw" }))
	r := dialRaw(t, ts.addr)
	const wrong = "-WRONGPASS invalid username-password pair or user is disabled."
	require.Equal(t, wrong, r.do("HELLO", "2", "AUTH", "nobody", "pw"))
	require.Equal(t, "-NOAUTH Authentication required.", r.do("PING"))
	require.Equal(t, wrong, r.do("AUTH", "nobody", "pw"))
	require.Equal(t, "-NOAUTH Authentication required.", r.do("PING"))
	require.Equal(t, wrong, r.do("HELLO", "2", "AUTH", "default", "nope"))
	require.Contains(t, r.do("HELLO", "2", "AUTH", "default", "pw"), "*[$server $redis")
	require.Equal(t, "+PONG", r.do("PING"))
}

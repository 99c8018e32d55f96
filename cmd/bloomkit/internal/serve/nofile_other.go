//go:build !unix

package serve

// nofileLimit is unknown off Unix: -max-clients is taken as given.
func nofileLimit() uint64 { return 0 }

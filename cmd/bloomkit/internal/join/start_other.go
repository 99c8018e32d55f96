//go:build !linux

package join

// startToken is unknown here ("0"): a folder's process is then alive while
// a process with its id exists.
func startToken(pid int) string { return "0" }

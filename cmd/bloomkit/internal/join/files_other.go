//go:build !unix

package join

// maxOpenFiles is how many temporary files a run keeps open at once.
func maxOpenFiles() int { return 256 }

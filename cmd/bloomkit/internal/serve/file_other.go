//go:build !unix

package serve

import "os"

// statID keeps the FileInfo: os.SameFile tells files apart (on Windows by
// volume serial number and file index).
func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	return fileID{info: fi}, nil
}

func (a fileID) same(b fileID) bool {
	return a.info != nil && b.info != nil && os.SameFile(a.info, b.info)
}

func diskBytes(fi os.FileInfo) uint64 { return uint64(fi.Size()) }

// lockWriter takes no lock elsewhere than Unix (mmapstore's caveat).
func lockWriter(*os.File) error { return nil }

// syncDir does nothing elsewhere than Unix.
func syncDir(string) error { return nil }

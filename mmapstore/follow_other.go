//go:build !linux

package mmapstore

import (
	"errors"
	"os"
)

// Elsewhere than Linux nothing is marked (see Follower): replaces wait for
// the writer's lock as they do for any writer.
var errNoMarks = errors.New("no marks on this platform")

func markFollowed(*os.File) error      { return nil }
func unmarkFollowed(*os.File) error    { return nil }
func followed(*os.File) (bool, error)  { return false, nil }
func markReplacing(*os.File) error     { return errNoMarks }
func unmarkReplacing(*os.File)         {}
func replacing(*os.File) (bool, error) { return false, nil }

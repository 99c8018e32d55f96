package join

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A run's temporary files live in one folder under the temporary root,
// named bloomkit-common-PID-START-RANDOM: the process id, a token of the
// process's start (its start time in clock ticks since boot on Linux, 0
// where unknown) and a random suffix. The live process holds an exclusive
// flock on the file "lock" inside it. A run removes the folders it finds
// under its root whose lock is free and whose process is gone (no process
// with that id, or one that started at another time): what SIGKILL left.
// A folder is never removed while its process lives, whether its lock is
// held yet or not.
const folderPrefix = "bloomkit-common-"

const lockName = "lock"

// tempFolder is a run's folder of temporary files.
type tempFolder struct {
	root string // where it was made
	path string
	mu   sync.Mutex // held while a file is created and while the folder is removed
	lock *os.File
	done bool // removed: nothing more is created in it
}

// makeTempFolder makes the run's folder under root ("" is the system's
// temporary folder) and takes its lock.
func makeTempFolder(root string) (*tempFolder, error) {
	if root == "" {
		root = os.TempDir()
	}
	pattern := fmt.Sprintf("%s%d-%s-*", folderPrefix, os.Getpid(), startToken(os.Getpid()))
	path, err := os.MkdirTemp(root, pattern)
	if err != nil {
		return nil, tmpFullError(root, err)
	}
	t := &tempFolder{root: root, path: path}
	if t.lock, err = os.OpenFile(filepath.Join(path, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		os.RemoveAll(path)
		return nil, tmpFullError(root, err)
	}
	if err := lockFile(t.lock, true); err != nil {
		t.remove()
		return nil, fmt.Errorf("lock %s: %w", t.lock.Name(), err)
	}
	return t, nil
}

// create makes a new file in the folder, unless it was removed.
func (t *tempFolder) create(name string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, errStopped
	}
	f, err := os.OpenFile(filepath.Join(t.path, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, tmpFullError(t.path, err)
	}
	return f, nil
}

// gone reports whether the folder was removed.
func (t *tempFolder) gone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

// remove deletes the folder and everything in it; no file is created in it
// afterwards. It may be called again, and from a signal handler's goroutine
// while another goroutine works in the folder.
func (t *tempFolder) remove() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	os.RemoveAll(t.path)
	if t.lock != nil {
		t.lock.Close()
		t.lock = nil
	}
}

// folderOwner parses a folder name made by makeTempFolder.
func folderOwner(name string) (pid int, start string, ok bool) {
	rest, ok := strings.CutPrefix(name, folderPrefix)
	if !ok {
		return 0, "", false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 {
		return 0, "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 || parts[1] == "" {
		return 0, "", false
	}
	return pid, parts[1], true
}

// alive reports whether the process pid that started at start still runs.
func alive(pid int, start string) bool {
	if !processExists(pid) {
		return false
	}
	now := startToken(pid)
	return start == "0" || now == "0" || now == start
}

// sweepStale removes the folders under root that runs killed without a
// cleanup left (see folderPrefix), and reports each with logf.
func sweepStale(root string, logf func(string, ...any)) {
	if root == "" {
		root = os.TempDir()
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return // the run reports a missing root if it needs it
	}
	for _, e := range ents {
		pid, start, ok := folderOwner(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		path := filepath.Join(root, e.Name())
		if removeIfStale(path, pid, start) {
			logf("removed %s, left by process %d, which is gone", path, pid)
		}
	}
}

// removeIfStale removes the folder path of process pid if that process is
// gone and nobody holds its lock.
func removeIfStale(path string, pid int, start string) bool {
	if !ownedByMe(path) {
		return false
	}
	lock, err := os.Open(filepath.Join(path, lockName))
	if err == nil {
		defer lock.Close()
		if lockFile(lock, false) != nil {
			return false // held: its process lives (or the lock is shared across hosts)
		}
	}
	if alive(pid, start) {
		return false // between its mkdir and its lock, or flock is not supported there
	}
	os.RemoveAll(path)
	return true
}

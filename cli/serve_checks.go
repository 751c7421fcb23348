package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// checkNodeName refuses a node name that cannot be part of a bucket key
// and a log line as it is: it names nodes/<node>.json, and "a/b", "..", or
// a 2,000-character name made the node retry an invalid key forever.
func checkNodeName(name string) error {
	bad := len(name) == 0 || len(name) > 63 || name == "." || name == ".."
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			bad = true
		}
	}
	if bad {
		return usageErr("node name %q (--node, CELLD_NODE, or the host name): use 1 to 63 letters, digits, '-', '_' or '.', not '.' or '..'", name)
	}
	return nil
}

// stateDirFor is the default CELLD_WATCH of a node: one directory per node
// name, so two nodes on one host never share one by default.
func stateDirFor(node string) string { return filepath.Join(".celld", "state", node) }

// lockStateDir makes sure dir is a directory this process can write, and
// holds an exclusive lock on it for the life of the process: two nodes
// writing one directory's SQLite files would corrupt each other's cells.
// It returns the function that releases the lock.
func lockStateDir(dir string) (func(), error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, usageErr("CELLD_WATCH %s is a file, not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErr("CELLD_WATCH %s: cannot create the directory: %v", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return nil, usageErr("CELLD_WATCH %s is not writable: %v", dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, usageErr("CELLD_WATCH %s: open its lock file: %v", dir, unwrapPath(err))
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, usageErr("CELLD_WATCH %s is in use by another celld process on this host: give each node its own --node and state directory", dir)
		}
		return nil, usageErr("CELLD_WATCH %s: lock: %v", dir, err)
	}
	return func() { lock.Close() }, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s", pe.Err)
	}
	return err
}

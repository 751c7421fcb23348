package cell

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// The replicator reads the database file (pages a snapshot or a merge
// needs) and the WAL (the frames of each commit). It reads them through
// the descriptors SQLite already holds for the connection, not its own:
// a resident cell then costs two descriptors (its database and its WAL;
// the WAL index is in memory, see locking_mode in db.go), not four, and
// closing a descriptor of ours can never drop SQLite's POSIX locks on
// the file. Where SQLite's descriptor cannot be had (another VFS, a
// platform without one), the file is opened separately instead.

// cellFile is a file of the cell the replicator reads.
type cellFile interface {
	io.ReaderAt
	// Size is the file's current size.
	Size() (int64, error)
	// Close releases the file; a descriptor SQLite owns stays open.
	Close() error
}

// osFile is a cellFile the replicator opened itself.
type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// cellFiles are the connection's database file and WAL, as the replicator
// reads them. Call on the cell's goroutine, while the connection is open
// (the WAL is open once the connection is in WAL mode).
func (c *conn) cellFiles(path string) (db, wal cellFile, err error) {
	if db, err = c.sharedFile(path, false); err != nil {
		return nil, nil, err
	}
	if wal, err = c.sharedFile(path+"-wal", true); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, wal, nil
}

// sharedFile is SQLite's descriptor of the database file (journal false)
// or of its WAL (journal true) when it can be had and is the file at path,
// else the file at path opened read-only.
func (c *conn) sharedFile(path string, journal bool) (cellFile, error) {
	if f, ok := c.vfsFile(path, journal); ok {
		return f, nil
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && journal {
			return nil, fmt.Errorf("open wal: %w", err)
		}
		return nil, err
	}
	return osFile{f}, nil
}

// closedFile stands for the files of a parked database: nothing reads
// them until it opens again.
type closedFile struct{}

func (closedFile) ReadAt([]byte, int64) (int, error) { return 0, ErrClosed }
func (closedFile) Size() (int64, error)              { return 0, ErrClosed }
func (closedFile) Close() error                      { return nil }

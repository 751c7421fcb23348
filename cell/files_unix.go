//go:build unix

package cell

import (
	"encoding/binary"
	"io"
	"os"
	"syscall"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// fdFile reads through a descriptor SQLite owns: it is valid while the
// connection is open, and never closed here. pread leaves the
// descriptor's offset alone, so reads here and SQLite's own never
// interfere.
type fdFile struct{ fd int }

func (f fdFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(f.fd, b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "pread", Path: "fd", Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f fdFile) Size() (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return 0, &os.PathError{Op: "fstat", Path: "fd", Err: err}
	}
	return st.Size, nil
}

func (fdFile) Close() error { return nil }

// vfsFile asks SQLite for its file object of the main database or its
// journal (SQLITE_FCNTL_FILE_POINTER, SQLITE_FCNTL_JOURNAL_POINTER; the
// journal of a WAL database is its WAL) and takes the descriptor of the
// unix VFS's file. It is used only if fstat shows it is the file at path,
// so a different VFS (whose file object is laid out otherwise) falls back
// to opening the file.
func (c *conn) vfsFile(path string, journal bool) (cellFile, bool) {
	op := int32(sqlite3.SQLITE_FCNTL_FILE_POINTER)
	if journal {
		op = sqlite3.SQLITE_FCNTL_JOURNAL_POINTER
	}
	if rc := sqlite3.Xsqlite3_file_control(c.tls, c.db, 0, op, c.out); rc != sqlite3.SQLITE_OK {
		return nil, false
	}
	p := c.outPtr(0)
	if p == 0 {
		return nil, false
	}
	// The file object is C memory: read its fields as bytes.
	var uf sqlite3.TunixFile
	b := libc.GoBytes(p, int(unsafe.Sizeof(uf)))
	methods := binary.NativeEndian.Uint64(b[unsafe.Offsetof(uf.FpMethod):])
	if ptrSize == 4 {
		methods = uint64(binary.NativeEndian.Uint32(b[unsafe.Offsetof(uf.FpMethod):]))
	}
	fd := int(int32(binary.NativeEndian.Uint32(b[unsafe.Offsetof(uf.Fh):])))
	if methods == 0 || fd < 0 {
		return nil, false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false
	}
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || want.Dev != st.Dev || want.Ino != st.Ino {
		return nil, false
	}
	return fdFile{fd}, true
}

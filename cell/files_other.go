//go:build !unix

package cell

// vfsFile: SQLite's descriptors are not shared on this platform.
func (c *conn) vfsFile(path string, journal bool) (cellFile, bool) { return nil, false }

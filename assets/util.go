package assets

import (
	"io"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func copyFile(w io.Writer, r io.Reader) { _, _ = io.Copy(w, r) }

// isDigest reports whether s is a SHA-256 in lowercase hex.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

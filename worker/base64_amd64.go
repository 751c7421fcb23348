//go:build amd64

package worker

import "golang.org/x/sys/cpu"

// decodeBase64SIMD decodes the longest prefix of src made of whole groups
// of 32 characters of Node's alphabet into dst, 24 bytes a group, and
// returns the characters read. It writes 32 bytes a step, so it stops
// while dst has room for that.
func decodeBase64SIMD(dst []byte, src string) int {
	if !base64AVX2 {
		return 0
	}
	return b64DecodeAVX2(dst, src)
}

// base64AVX2 says whether the vector loop runs; tests turn it off to
// compare the table decoder's results with it.
var base64AVX2 = cpu.X86.HasAVX2

//go:noescape
func b64DecodeAVX2(dst []byte, src string) (read int)

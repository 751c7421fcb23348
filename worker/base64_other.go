//go:build !amd64

package worker

// decodeBase64SIMD has no vector form on this architecture: the table
// decoder does all of the work.
func decodeBase64SIMD(dst []byte, src string) int { return 0 }

// base64AVX2 is always false here (see base64_amd64.go).
const base64AVX2 = false

package worker

import (
	"encoding/base64"
	"encoding/binary"
	"sync"
)

// Decoding base64 is what Buffer.from(string, "base64") spends its time
// on, so it has a fast path: AVX2 on amd64 (32 characters a step), then a
// table of every pair of characters (both alphabets, as Node accepts
// either) that gives 12 bits per lookup, eight characters six bytes a step. The first character the table does
// not know (whitespace, padding, junk) hands the rest to the lenient path.

var b64Pairs = sync.OnceValue(func() *[1 << 16]uint16 {
	var one [256]int16
	for i := range one {
		one[i] = -1
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		one[std[i]] = int16(i)
	}
	one['-'], one['_'] = 62, 63
	t := new([1 << 16]uint16)
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b++ {
			v := uint16(0xFFFF)
			if one[a] >= 0 && one[b] >= 0 {
				v = uint16(one[a])<<6 | uint16(one[b])
			}
			t[a<<8|b] = v
		}
	}
	return t
})

// decodeBase64Fast decodes the longest prefix of s made of whole groups
// of eight alphabet characters into dst (which must hold DecodedLen(len(s))
// bytes plus eight). It returns the bytes written and the characters read.
func decodeBase64Fast(dst []byte, s string) (n, read int) {
	// Vector instructions first, where there are any (base64_amd64.s).
	read = decodeBase64SIMD(dst, s)
	n = read / 4 * 3
	t := b64Pairs()
	// Sixteen characters (twelve bytes) a step; an unknown pair has bit 15
	// set, which no 12-bit value has, so one test covers the step.
	for read+16 <= len(s) && n+16 <= len(dst) {
		q := s[read : read+16]
		a := t[uint16(q[0])<<8|uint16(q[1])]
		b := t[uint16(q[2])<<8|uint16(q[3])]
		c := t[uint16(q[4])<<8|uint16(q[5])]
		d := t[uint16(q[6])<<8|uint16(q[7])]
		e := t[uint16(q[8])<<8|uint16(q[9])]
		f := t[uint16(q[10])<<8|uint16(q[11])]
		g := t[uint16(q[12])<<8|uint16(q[13])]
		h := t[uint16(q[14])<<8|uint16(q[15])]
		if (a|b|c|d|e|f|g|h)&0x8000 != 0 {
			break
		}
		o := dst[n : n+16]
		binary.BigEndian.PutUint64(o[0:8], (uint64(a)<<36|uint64(b)<<24|uint64(c)<<12|uint64(d))<<16)
		binary.BigEndian.PutUint64(o[6:14], (uint64(e)<<36|uint64(f)<<24|uint64(g)<<12|uint64(h))<<16)
		n += 12
		read += 16
	}
	for read+8 <= len(s) && n+8 <= len(dst) {
		q := s[read : read+8]
		a := t[uint16(q[0])<<8|uint16(q[1])]
		b := t[uint16(q[2])<<8|uint16(q[3])]
		c := t[uint16(q[4])<<8|uint16(q[5])]
		d := t[uint16(q[6])<<8|uint16(q[7])]
		if (a|b|c|d)&0x8000 != 0 {
			break
		}
		binary.BigEndian.PutUint64(dst[n:n+8], (uint64(a)<<36|uint64(b)<<24|uint64(c)<<12|uint64(d))<<16)
		n += 6
		read += 8
	}
	return n, read
}

// nodeBase64 decodes like Node: either alphabet, whitespace and other
// characters skipped, padding optional, decoding stops at the first '='.
func nodeBase64(s string) []byte {
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(s))+8)
	n, read := decodeBase64Fast(out, s)
	if read == len(s) {
		return out[:n]
	}
	rest := s[read:]
	if len(rest)%4 == 0 {
		if m, err := base64.StdEncoding.Decode(out[n:], []byte(rest)); err == nil {
			return out[:n+m]
		}
	}
	return out[:n+decodeLenient(out[n:], rest)]
}

// decodeLenient decodes s as Node does: characters outside both alphabets
// are skipped, '-' and '_' read as '+' and '/', the first '=' ends the
// input, and a lone trailing character is dropped. It writes to dst
// (room for the decoded length of s) and returns the bytes written.
func decodeLenient(dst []byte, s string) int {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == '-':
			clean = append(clean, '+')
		case c == '_':
			clean = append(clean, '/')
		case c == '=':
			i = len(s)
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	m, _ := base64.RawStdEncoding.Decode(dst, clean)
	return m
}

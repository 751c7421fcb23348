package spec

import (
	"errors"
	"testing"
	"time"
)

// FuzzParse: any text either parses, and then every occurrence Next
// finds matches the expression and lies after its input, or is refused
// with ErrSyntax; it never panics or hangs.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "0 18 * * 6L", "59 23 LW * *", "0 9 * * MON#3", "0 0 15W * *", "5-10/5 1 */2 JAN-MAR,jul SUN-SAT", "0 0 30 2 *", "*/60 * * * *", "?"} {
		f.Add(s, int64(1796149258))
	}
	f.Fuzz(func(t *testing.T, expr string, unix int64) {
		s, err := Parse(expr)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) = %v, not ErrSyntax", expr, err)
			}
			return
		}
		from := time.Unix(unix%(1<<34), 0).UTC()
		cur := from
		for i := 0; i < 3; i++ {
			n, ok := s.Next(cur)
			if !ok {
				t.Fatalf("%q: no occurrence after %s though Parse accepted it", expr, cur)
			}
			if !n.After(cur) || n.Second() != 0 || !s.matches(n) {
				t.Fatalf("%q: Next(%s) = %s does not match", expr, cur, n)
			}
			cur = n
		}
	})
}

// matches checks one instant against the fields directly.
func (s *Schedule) matches(t time.Time) bool {
	return s.min&(1<<uint(t.Minute())) != 0 && s.hour&(1<<uint(t.Hour())) != 0 &&
		s.month&(1<<uint(t.Month())) != 0 && s.dayMatches(t)
}

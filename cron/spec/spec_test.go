package spec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestNext checks Cloudflare's documented examples and every special
// item against occurrences worked out by hand (Dec 1 2026 is a Tuesday).
func TestNext(t *testing.T) {
	cases := []struct {
		expr, from string
		want       []string
	}{
		{"* * * * *", "2026-12-01 10:00:30", []string{"2026-12-01 10:01:00", "2026-12-01 10:02:00"}},
		{"*/30 * * * *", "2026-12-01 10:00:00", []string{"2026-12-01 10:30:00", "2026-12-01 11:00:00"}},
		{"45 * * * *", "2026-12-01 10:50:00", []string{"2026-12-01 11:45:00"}},
		{"0 17 * * sun", "2026-12-01 00:00:00", []string{"2026-12-06 17:00:00", "2026-12-13 17:00:00"}},
		{"10 7 * * mon-fri", "2026-12-04 08:00:00", []string{"2026-12-07 07:10:00"}}, // Fri after 7:10 -> Mon
		{"10 7 * * 2-6", "2026-12-04 08:00:00", []string{"2026-12-07 07:10:00"}},     // the same in numbers (1 = Sunday)
		{"0 15 1 * *", "2026-12-01 16:00:00", []string{"2027-01-01 15:00:00"}},
		{"0 18 * * 6L", "2026-12-01 00:00:00", []string{"2026-12-25 18:00:00", "2027-01-29 18:00:00"}},
		{"59 23 LW * *", "2026-12-01 00:00:00", []string{"2026-12-31 23:59:00", "2027-01-29 23:59:00"}}, // Jan 31 2027 is a Sunday
		{"0 0 L * *", "2027-02-01 00:00:00", []string{"2027-02-28 00:00:00", "2027-03-31 00:00:00"}},
		{"0 0 L 2 *", "2027-03-01 00:00:00", []string{"2028-02-29 00:00:00"}},
		{"0 0 15W * *", "2026-11-01 00:00:00", []string{"2026-11-16 00:00:00", "2026-12-15 00:00:00"}}, // Nov 15 2026 is a Sunday
		{"0 0 1W * *", "2026-07-15 00:00:00", []string{"2026-08-03 00:00:00"}},                         // Aug 1 2026 is a Saturday: Monday the 3rd, not July 31
		{"0 9 * * 2#1", "2026-12-08 10:00:00", []string{"2027-01-04 09:00:00"}},                        // first Monday
		{"0 9 * * MON#3", "2026-12-01 00:00:00", []string{"2026-12-21 09:00:00"}},
		{"0 0 1 * MON", "2026-12-01 00:00:00", []string{"2026-12-07 00:00:00", "2026-12-14 00:00:00", "2026-12-21 00:00:00", "2026-12-28 00:00:00", "2027-01-01 00:00:00"}}, // union
		{"0 0 */10 * *", "2026-12-01 00:00:00", []string{"2026-12-11 00:00:00", "2026-12-21 00:00:00", "2026-12-31 00:00:00", "2027-01-01 00:00:00"}},
		{"0 0 */10 * MON", "2026-12-01 00:00:00", []string{"2026-12-07 00:00:00", "2026-12-11 00:00:00"}}, // */10 is a restriction: union
		{"0 0 * JAN,jul *", "2026-12-01 00:00:00", []string{"2027-01-01 00:00:00"}},
		{"5-10/5 1 * * *", "2026-12-01 01:06:00", []string{"2026-12-01 01:10:00", "2026-12-02 01:05:00"}},
		{"50/5 * * * *", "2026-12-01 01:56:00", []string{"2026-12-01 02:50:00"}},
		{"0 0 * * L", "2026-12-01 00:00:00", []string{"2026-12-05 00:00:00"}}, // L alone: Saturday
		{"0 0 29 2 *", "2026-12-01 00:00:00", []string{"2028-02-29 00:00:00"}},
	}
	for _, c := range cases {
		s, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if s.String() != c.expr {
			t.Errorf("String() = %q, want %q", s.String(), c.expr)
		}
		cur := at(c.from)
		for _, w := range c.want {
			n, ok := s.Next(cur)
			if !ok || !n.Equal(at(w)) {
				t.Errorf("%q: Next(%s) = %s %v, want %s", c.expr, cur.Format(time.DateTime), n.Format(time.DateTime), ok, w)
				break
			}
			cur = n
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"* * * *":                "4 fields, want 5",
		"* * * * * *":            "6 fields, want 5",
		"60 * * * *":             `minute field "60": 60 is out of range 0-59`,
		"* 24 * * *":             "hour field",
		"* * 0 * *":              "0 is out of range 1-31",
		"* * * 13 *":             "13 is out of range 1-12",
		"* * * * 0":              "Sunday is 1 (or SUN)",
		"* * * * SAT-SUN":        "descends",
		"5-1 * * * *":            "descends",
		"*,5 * * * *":            "* may not appear in a list",
		"1,* * * * *":            "* may not appear in a list",
		"? * * * *":              "?",
		"* * ? * *":              "?",
		"*/60 * * * *":           "step",
		"*/0 * * * *":            "step",
		"* */24 * * *":           "step",
		"* * * * 8":              "out of range 1-7",
		"* * * FOO *":            "not a number or a name",
		"a * * * *":              "not a number",
		"* * * * 2#6":            "1-5",
		"* * 5L * *":             "day-of-month specials",
		"* * * * 2W":             "W belongs in day-of-month",
		"L * * * *":              "not a number",
		"0 0 30 2 *":             "never fires",
		"1,,2 * * * *":           "empty list item",
		"-1 * * * *":             "not a number",
		"+1 * * * *":             "not a number",
		"":                       "0 fields",
		strings.Repeat("1", 300): "longer than",
	}
	for expr, want := range cases {
		_, err := Parse(expr)
		if err == nil {
			t.Errorf("Parse(%q) accepted", expr)
			continue
		}
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), want) || (len(expr) < 100 && !strings.Contains(err.Error(), expr)) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax naming the expression and %q", expr, err, want)
		}
	}
}

func TestSecondsAndLatest(t *testing.T) {
	if _, err := Parse("*/2 * * * * *"); err == nil {
		t.Fatal("Parse accepted a seconds field")
	}
	s, err := ParseSeconds("*/2 * * * * *")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := s.Next(at("2026-12-01 10:00:01"))
	if !n.Equal(at("2026-12-01 10:00:02")) {
		t.Fatalf("Next = %s", n)
	}
	m, _ := Parse("* * * * *")
	// after a three-hour outage the latest missed minute, not the first
	got, skipped := m.Latest(at("2026-12-01 10:00:00"), at("2026-12-01 13:00:30"))
	if !got.Equal(at("2026-12-01 13:00:00")) || skipped != 180 {
		t.Fatalf("Latest = %s, %d skipped", got, skipped)
	}
	if got, skipped := m.Latest(at("2026-12-01 10:00:00"), at("2026-12-01 10:00:59")); !got.Equal(at("2026-12-01 10:00:00")) || skipped != 0 {
		t.Fatalf("Latest with nothing newer = %s, %d", got, skipped)
	}
}

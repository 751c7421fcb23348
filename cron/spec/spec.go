// Package spec parses Cloudflare's cron trigger dialect and computes the
// occurrences of an expression, in UTC. It uses only the standard library,
// so `celld deploy` can validate triggers.crons without a cell in sight.
//
// The dialect (Cloudflare's, as upstream celld documents it):
//
//	minute hour day-of-month month day-of-week
//	0-59   0-23 1-31         1-12  1-7 (1 = Sunday)
//	                         JAN-DEC SUN-SAT (any case)
//
// Each field is `*` or a comma-separated list of items; an item is a
// value, a range `a-b` (ascending), either with an optional step `/n`
// (`*/n`, `a-b/n`, `a/n` = from a to the field's end), where n is at least
// 1 and smaller than the field's width. `*` may not appear in a list; `?`
// is refused. Day of month also takes `L` (the last day), `LW` (the last
// weekday, Monday-Friday) and `nW` (the weekday nearest day n, within the
// month); day of week also takes `nL` (the last such weekday of the
// month), `n#k` (the k-th such weekday, k 1-5) and `L` alone (7,
// Saturday). When both day fields are restricted (anything but a literal
// `*`), a day matches if either matches (the classic cron union); when one
// is `*`, the other decides alone.
package spec

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("invalid cron expression")

// Schedule is a parsed expression.
type Schedule struct {
	expr    string
	seconds bool // a leading seconds field (ParseSeconds only)
	sec     uint64
	min     uint64
	hour    uint64
	dom     uint64 // bit d: day d of the month (1-31)
	month   uint64 // bit m: month m (1-12)
	dow     uint64 // bit d: weekday d (0 = Sunday .. 6 = Saturday)
	domStar bool
	dowStar bool
	// the special day items
	lastDay     bool     // L
	lastWeekday bool     // LW
	nearest     []int    // nW
	lastDow     []int    // nL: weekday (0-6)
	nthDow      [][2]int // n#k: weekday (0-6), k
}

// String is the expression as written.
func (s *Schedule) String() string { return s.expr }

type field struct {
	name     string
	lo, hi   int
	names    []string // names[i] is the value lo+i
	dayField int      // 1: day of month, 2: day of week
}

var (
	fSecond = field{name: "second", lo: 0, hi: 59}
	fMinute = field{name: "minute", lo: 0, hi: 59}
	fHour   = field{name: "hour", lo: 0, hi: 23}
	fDom    = field{name: "day-of-month", lo: 1, hi: 31, dayField: 1}
	fMonth  = field{name: "month", lo: 1, hi: 12, names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}}
	fDow    = field{name: "day-of-week", lo: 1, hi: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}, dayField: 2}
)

// MaxLength bounds an expression's length.
const MaxLength = 256

// Parse parses a five-field expression.
func Parse(expr string) (*Schedule, error) { return parse(expr, false) }

// ParseSeconds parses an expression with a leading sixth field of seconds
// (0-59). Only tests use it (CELLD_TEST_CRON_SECONDS): Cloudflare has no
// such field.
func ParseSeconds(expr string) (*Schedule, error) { return parse(expr, true) }

func parse(expr string, seconds bool) (*Schedule, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrSyntax, expr, fmt.Sprintf(format, a...))
	}
	if len(expr) > MaxLength {
		return nil, bad("longer than %d characters", MaxLength)
	}
	parts := strings.Fields(expr)
	fields := []field{fMinute, fHour, fDom, fMonth, fDow}
	if seconds {
		fields = append([]field{fSecond}, fields...)
	}
	if len(parts) != len(fields) {
		return nil, bad("%d fields, want %d (%s)", len(parts), len(fields), fieldNames(fields))
	}
	s := &Schedule{expr: expr, seconds: seconds, sec: 1}
	for i, f := range fields {
		bits, err := s.parseField(f, parts[i])
		if err != nil {
			return nil, bad("%s field %q: %v", f.name, parts[i], err)
		}
		switch f.name {
		case "second":
			s.sec = bits
		case "minute":
			s.min = bits
		case "hour":
			s.hour = bits
		case "day-of-month":
			s.dom, s.domStar = bits, parts[i] == "*"
		case "month":
			s.month = bits
		case "day-of-week":
			s.dow, s.dowStar = bits>>1, parts[i] == "*" // 1-7 -> 0-6
		}
	}
	// An expression that never fires (30 2: February 30th) is refused:
	// look for an occurrence over a full 28-year calendar cycle (plus
	// the century leap rule's margin).
	if _, ok := s.next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), 400*366); !ok {
		return nil, bad("it never fires (no day matches both its day and month fields)")
	}
	return s, nil
}

func fieldNames(fs []field) string {
	n := make([]string, len(fs))
	for i, f := range fs {
		n[i] = f.name
	}
	return strings.Join(n, " ")
}

// parseField returns the bit set of plain values; day items land in s.
func (s *Schedule) parseField(f field, text string) (uint64, error) {
	if text == "*" {
		return bitRange(f.lo, f.hi, 1), nil
	}
	var bits uint64
	items := strings.Split(text, ",")
	for _, it := range items {
		if it == "" {
			return 0, errors.New("empty list item")
		}
		if len(items) > 1 && strings.HasPrefix(it, "*") && !strings.HasPrefix(it, "*/") {
			return 0, errors.New("* may not appear in a list")
		}
		b, special, err := s.parseItem(f, it)
		if err != nil {
			return 0, err
		}
		if !special {
			bits |= b
		}
	}
	return bits, nil
}

func (s *Schedule) parseItem(f field, it string) (bits uint64, special bool, err error) {
	up := strings.ToUpper(it)
	if strings.Contains(up, "?") {
		return 0, false, errors.New("? is not supported (use *)")
	}
	switch f.dayField {
	case 1:
		switch {
		case up == "L":
			s.lastDay = true
			return 0, true, nil
		case up == "LW":
			s.lastWeekday = true
			return 0, true, nil
		case strings.HasSuffix(up, "W"):
			d, err := f.value(up[:len(up)-1])
			if err != nil {
				return 0, false, fmt.Errorf("%s in %q", err, it)
			}
			s.nearest = append(s.nearest, d)
			return 0, true, nil
		case strings.Contains(up, "L") || strings.Contains(up, "W") || strings.Contains(up, "#"):
			return 0, false, fmt.Errorf("%q: L, LW and nW are the day-of-month specials", it)
		}
	case 2:
		switch {
		case up == "L":
			return 1 << 7, false, nil // Saturday (bit 7 before the shift)
		case strings.HasSuffix(up, "L"):
			d, err := f.value(up[:len(up)-1])
			if err != nil {
				return 0, false, fmt.Errorf("%s in %q", err, it)
			}
			s.lastDow = append(s.lastDow, d-1)
			return 0, true, nil
		case strings.Contains(up, "#"):
			ds, ks, _ := strings.Cut(up, "#")
			d, err := f.value(ds)
			if err != nil {
				return 0, false, fmt.Errorf("%s in %q", err, it)
			}
			k, err := strconv.Atoi(ks)
			if err != nil || k < 1 || k > 5 {
				return 0, false, fmt.Errorf("%q: the occurrence after # must be 1-5", it)
			}
			s.nthDow = append(s.nthDow, [2]int{d - 1, k})
			return 0, true, nil
		case strings.Contains(up, "W"):
			return 0, false, fmt.Errorf("%q: W belongs in day-of-month", it)
		}
	}
	rng, stepText, hasStep := strings.Cut(it, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		width := f.hi - f.lo + 1
		if err != nil || n < 1 || n >= width {
			return 0, false, fmt.Errorf("step %q must be a number from 1 to %d", stepText, width-1)
		}
		step = n
	}
	lo, hi := f.lo, f.hi
	switch {
	case rng == "*":
		if !hasStep {
			return 0, false, errors.New("* may not appear in a list")
		}
	case strings.Contains(rng, "-"):
		a, b, _ := strings.Cut(rng, "-")
		if lo, err = f.value(a); err != nil {
			return 0, false, err
		}
		if hi, err = f.value(b); err != nil {
			return 0, false, err
		}
		if lo > hi {
			return 0, false, fmt.Errorf("range %q descends (write it as two items: %s-%s,%s-%s)", rng, a, f.text(f.hi), f.text(f.lo), b)
		}
	default:
		if lo, err = f.value(rng); err != nil {
			return 0, false, err
		}
		if !hasStep {
			hi = lo
		}
	}
	return bitRange(lo, hi, step), false, nil
}

func (f field) text(v int) string {
	if len(f.names) > 0 {
		return f.names[v-f.lo]
	}
	return strconv.Itoa(v)
}

// value reads a number or a name of f.
func (f field) value(t string) (int, error) {
	up := strings.ToUpper(t)
	for i, n := range f.names {
		if n == up {
			return f.lo + i, nil
		}
	}
	v, err := strconv.Atoi(t)
	if err != nil || t == "" || t[0] == '+' || t[0] == '-' {
		if len(f.names) > 0 {
			return 0, fmt.Errorf("%q is not a number or a name (%s-%s)", t, f.names[0], f.names[len(f.names)-1])
		}
		return 0, fmt.Errorf("%q is not a number", t)
	}
	if v < f.lo || v > f.hi {
		extra := ""
		if f.dayField == 2 && v == 0 {
			extra = "; Sunday is 1 (or SUN)"
		}
		return 0, fmt.Errorf("%d is out of range %d-%d%s", v, f.lo, f.hi, extra)
	}
	return v, nil
}

func bitRange(lo, hi, step int) uint64 {
	var b uint64
	for v := lo; v <= hi; v += step {
		b |= 1 << uint(v)
	}
	return b
}

// Next is the first occurrence strictly after t (in UTC, at minute
// resolution, or second with a seconds field). ok is false when there is
// none within a few centuries (Parse refuses such expressions).
func (s *Schedule) Next(t time.Time) (time.Time, bool) {
	return s.next(t, 400*366)
}

// Latest is the latest occurrence at or before now, stepping forward
// from the occurrence from (itself at or before now), and how many
// occurrences it stepped over (from included, the one returned not). It
// gives up after a million steps (a years-long outage of a schedule that
// fires every second) and returns the last one reached.
func (s *Schedule) Latest(from, now time.Time) (time.Time, int) {
	cur, n := from, 0
	for ; n < 1_000_000; n++ {
		next, ok := s.Next(cur)
		if !ok || next.After(now) {
			break
		}
		cur = next
	}
	return cur, n
}

func (s *Schedule) next(t time.Time, maxDays int) (time.Time, bool) {
	t = t.UTC()
	unit := time.Minute
	if s.seconds {
		unit = time.Second
	}
	t = t.Truncate(unit).Add(unit)
	y, mo, d := t.Date()
	day := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	first := true
	for i := 0; i < maxDays; i++ {
		if s.month&(1<<uint(day.Month())) != 0 && s.dayMatches(day) {
			h0, m0, s0 := 0, 0, 0
			if first {
				h0, m0, s0 = t.Hour(), t.Minute(), t.Second()
			}
			if at, ok := s.inDay(day, h0, m0, s0); ok {
				return at, true
			}
		}
		first = false
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}, false
}

// inDay is the first time of day at or after h0:m0:s0 that matches.
func (s *Schedule) inDay(day time.Time, h0, m0, s0 int) (time.Time, bool) {
	for h := h0; h < 24; h++ {
		if s.hour&(1<<uint(h)) == 0 {
			m0, s0 = 0, 0
			continue
		}
		for m := m0; m < 60; m++ {
			if s.min&(1<<uint(m)) == 0 {
				s0 = 0
				continue
			}
			for sec := s0; sec < 60; sec++ {
				if s.sec&(1<<uint(sec)) != 0 {
					return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second), true
				}
			}
			s0 = 0
		}
		m0, s0 = 0, 0
	}
	return time.Time{}, false
}

func (s *Schedule) domMatches(day time.Time) bool {
	d := day.Day()
	if s.dom&(1<<uint(d)) != 0 {
		return true
	}
	last := daysIn(day)
	if s.lastDay && d == last {
		return true
	}
	wd := day.Weekday()
	if s.lastWeekday && wd != time.Saturday && wd != time.Sunday {
		// the last weekday: no weekday follows it in the month
		rest := last - d
		if rest == 0 || (wd == time.Friday && rest <= 2) {
			return true
		}
	}
	for _, n := range s.nearest {
		if nearestWeekday(day, n) == d {
			return true
		}
	}
	return false
}

func (s *Schedule) dowMatches(day time.Time) bool {
	wd := int(day.Weekday())
	if s.dow&(1<<uint(wd)) != 0 {
		return true
	}
	d := day.Day()
	for _, l := range s.lastDow {
		if l == wd && d+7 > daysIn(day) {
			return true
		}
	}
	for _, nk := range s.nthDow {
		if nk[0] == wd && (d-1)/7+1 == nk[1] {
			return true
		}
	}
	return false
}

func (s *Schedule) dayMatches(day time.Time) bool {
	switch {
	case s.domStar && s.dowStar:
		return true
	case s.domStar:
		return s.dowMatches(day)
	case s.dowStar:
		return s.domMatches(day)
	default:
		return s.domMatches(day) || s.dowMatches(day)
	}
}

func daysIn(day time.Time) int {
	return time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// nearestWeekday is the day of the month of the weekday nearest day n of
// day's month (n beyond the month's end counts as its last day), never
// leaving the month: Quartz's nW.
func nearestWeekday(day time.Time, n int) int {
	last := daysIn(day)
	n = min(n, last)
	t := time.Date(day.Year(), day.Month(), n, 0, 0, 0, 0, time.UTC)
	switch t.Weekday() {
	case time.Saturday:
		if n == 1 {
			return 3 // Monday the 3rd
		}
		return n - 1
	case time.Sunday:
		if n == last {
			return n - 2
		}
		return n + 1
	}
	return n
}

// MaxTriggers is how many cron expressions one Worker may have:
// Cloudflare's limit for a paid account (250 Cron Triggers), which bounds
// what one Worker there can have.
const MaxTriggers = 250

// TestSecondsEnv, set to 1, lets a trigger have a leading seconds field
// (six fields). It exists for tests that must see several occurrences in
// seconds, never for production: Cloudflare has no seconds field.
const TestSecondsEnv = "CELLD_TEST_CRON_SECONDS"

// ParseTrigger parses a triggers.crons entry: five fields, or six under
// TestSecondsEnv=1.
func ParseTrigger(expr string) (*Schedule, error) {
	if os.Getenv(TestSecondsEnv) == "1" && len(strings.Fields(expr)) == 6 {
		return ParseSeconds(expr)
	}
	return Parse(expr)
}

// CheckTriggers validates a Worker's triggers.crons as a whole: each
// expression parses, none is listed twice, at most MaxTriggers.
func CheckTriggers(exprs []string) []error {
	var errs []error
	if len(exprs) > MaxTriggers {
		errs = append(errs, fmt.Errorf("%d cron triggers, more than the %d a Worker may have", len(exprs), MaxTriggers))
	}
	seen := map[string]int{}
	for i, e := range exprs {
		if _, err := ParseTrigger(e); err != nil {
			errs = append(errs, fmt.Errorf("triggers.crons[%d]: %w", i, err))
		}
		if j, dup := seen[e]; dup {
			errs = append(errs, fmt.Errorf("triggers.crons[%d]: %q is listed twice (also at [%d])", i, e, j))
		}
		seen[e] = i
	}
	return errs
}

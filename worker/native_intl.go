package worker

import (
	"strings"
	"time"
	_ "time/tzdata" // Intl's time zones must not depend on the host's tz database
	"unicode"
	"unicode/utf16"

	"github.com/dop251/goja"
	"golang.org/x/text/collate"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// The Go half of Intl (prelude/24_intl*.js): locale tags, time zones from
// the embedded IANA database, and collation.

// zoneByName resolves an IANA time zone name the way ECMA-402 does: case
// does not matter, and the result is the name in its canonical case.
func zoneByName(name string) (*time.Location, string) {
	switch strings.ToUpper(name) {
	case "UTC", "ETC/UTC", "ETC/GMT", "GMT", "ETC/UCT", "UCT", "ETC/ZULU", "ZULU", "ETC/UNIVERSAL", "UNIVERSAL", "ETC/GREENWICH", "GREENWICH", "ETC/GMT0", "GMT0", "ETC/GMT+0", "GMT+0", "ETC/GMT-0", "GMT-0":
		return time.UTC, "UTC"
	}
	if name == "" || strings.ContainsAny(name, " \\") || strings.Contains(name, "..") || strings.ToLower(name) == "local" {
		return nil, ""
	}
	for _, cand := range []string{name, zoneCase(name)} {
		if loc, err := time.LoadLocation(cand); err == nil {
			return loc, cand
		}
	}
	return nil, ""
}

// zoneCase guesses the canonical spelling of a case-folded zone name:
// each word capitalized ("america/new_york" -> "America/New_York"), with
// the few lowercase words and all-caps forms the database uses.
func zoneCase(name string) string {
	parts := strings.Split(strings.ToLower(name), "/")
	for i, p := range parts {
		if i == 0 && p == "etc" {
			parts[i] = "Etc"
			continue
		}
		if len(p) <= 3 && i > 0 && parts[0] == "etc" || strings.HasPrefix(p, "gmt") {
			parts[i] = strings.ToUpper(p)
			continue
		}
		words := strings.FieldsFunc(p, func(r rune) bool { return r == '_' || r == '-' })
		seps := []byte{}
		for _, c := range []byte(p) {
			if c == '_' || c == '-' {
				seps = append(seps, c)
			}
		}
		var b strings.Builder
		for j, w := range words {
			if j > 0 {
				b.WriteByte(seps[j-1])
			}
			switch w {
			case "of", "es", "au", "da":
				if j > 0 {
					b.WriteString(w)
					continue
				}
			}
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, "/")
}

func registerIntlNatives(set func(string, nativeFunc)) {
	// zone(name) -> canonical name, or null when unknown
	set("zone", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if _, n := zoneByName(call.Argument(0).String()); n != "" {
			return iso.vm.ToValue(n)
		}
		return goja.Null()
	})
	// zoneParts(ms, name) -> [year, month(1-12), day, hour, minute, second,
	// weekday(0=Sunday), offsetSeconds, isDST, abbreviation]
	set("zoneParts", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		ms := call.Argument(0).ToInteger()
		loc, _ := zoneByName(call.Argument(1).String())
		if loc == nil {
			loc = time.UTC
		}
		t := time.UnixMilli(ms).In(loc)
		abbr, off := t.Zone()
		return vm.NewArray(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), int(t.Weekday()), off, t.IsDST(), abbr)
	})
	// locale(tag) -> the canonical BCP 47 tag, or null when not well formed
	set("locale", func(iso *isolate, call goja.FunctionCall) goja.Value {
		tag, err := language.Parse(call.Argument(0).String())
		if err != nil {
			return goja.Null()
		}
		return iso.vm.ToValue(tag.String())
	})
	// collator(locale, sensitivity, numeric, ignorePunctuation) -> a collator
	set("collator", func(iso *isolate, call goja.FunctionCall) goja.Value {
		tag, _ := language.Parse(call.Argument(0).String())
		var opts []collate.Option
		switch call.Argument(1).String() {
		case "base":
			opts = append(opts, collate.IgnoreCase, collate.IgnoreDiacritics, collate.IgnoreWidth)
		case "accent":
			opts = append(opts, collate.IgnoreCase, collate.IgnoreWidth)
		case "case":
			opts = append(opts, collate.IgnoreDiacritics, collate.IgnoreWidth)
		}
		if call.Argument(2).ToBoolean() {
			opts = append(opts, collate.Numeric)
		}
		if call.Argument(3).ToBoolean() {
			opts = append(opts, collate.IgnoreWidth, collate.Loose)
		}
		return iso.vm.ToValue(collate.New(tag, opts...))
	})
	// collate(collator, a, b) -> -1, 0 or 1
	set("collate", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c, _ := call.Argument(0).Export().(*collate.Collator)
		return iso.vm.ToValue(c.CompareString(call.Argument(1).String(), call.Argument(2).String()))
	})
	// segment(granularity, string) -> [start, end, wordLike, ...] (UTF-16)
	set("segment", func(iso *isolate, call goja.FunctionCall) goja.Value {
		segs := segments(call.Argument(0).String(), call.Argument(1).String())
		flat := make([]any, 0, 3*len(segs))
		for _, s := range segs {
			flat = append(flat, s[0], s[1], s[2] == 1)
		}
		return iso.vm.NewArray(flat...)
	})
	// plural(locale, ordinal, i, v, w, f, t) -> the CLDR plural category of
	// a number given by its operands.
	set("plural", func(iso *isolate, call goja.FunctionCall) goja.Value {
		tag, _ := language.Parse(call.Argument(0).String())
		rules := plural.Cardinal
		if call.Argument(1).ToBoolean() {
			rules = plural.Ordinal
		}
		arg := func(i int) int { return int(call.Argument(i).ToInteger()) }
		form := rules.MatchPlural(tag, arg(2), arg(3), arg(4), arg(5), arg(6))
		return iso.vm.ToValue(pluralNames[form])
	})
}

var pluralNames = map[plural.Form]string{plural.Other: "other", plural.Zero: "zero", plural.One: "one", plural.Two: "two", plural.Few: "few", plural.Many: "many"}

// segments splits s for Intl.Segmenter into [start, end, wordLike] triples
// of UTF-16 offsets: extended grapheme clusters (without Hangul syllable
// rules), words (letters and digits joined by ' ’ . : between them,
// whitespace runs, any other cluster alone) or sentences (ended by . ! ?
// and what closes and follows them).
func segments(granularity, s string) [][3]int {
	rs := []rune(s)
	// clusters as rune index ranges
	var cl [][2]int
	isExt := func(r rune) bool {
		return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) || r == 0x200D || (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x1F3FB && r <= 0x1F3FF) || (r >= 0xE0020 && r <= 0xE007F)
	}
	isRI := func(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }
	for i := 0; i < len(rs); {
		j := i + 1
		switch {
		case rs[i] == '\r' && j < len(rs) && rs[j] == '\n':
			j++
		case isRI(rs[i]) && j < len(rs) && isRI(rs[j]):
			j++
		default:
			for j < len(rs) {
				if rs[j-1] == 0x200D && j > i+1 {
					j++
					continue
				}
				if !isExt(rs[j]) {
					break
				}
				j++
			}
		}
		cl = append(cl, [2]int{i, j})
		i = j
	}
	u16 := make([]int, len(rs)+1)
	for i, r := range rs {
		u16[i+1] = u16[i] + utf16.RuneLen(r)
	}
	var out [][3]int
	add := func(a, b int, word bool) {
		w := 0
		if word {
			w = 1
		}
		out = append(out, [3]int{u16[a], u16[b], w})
	}
	switch granularity {
	case "word":
		isW := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
		for k := 0; k < len(cl); {
			a, b := cl[k][0], cl[k][1]
			r := rs[a]
			switch {
			case isW(r):
				for k+1 < len(cl) {
					n := rs[cl[k+1][0]]
					if isW(n) {
						k++
						continue
					}
					if (n == '\'' || n == '’' || n == '.' || n == ':') && k+2 < len(cl) && isW(rs[cl[k+2][0]]) {
						k += 2
						continue
					}
					break
				}
				add(a, cl[k][1], true)
			case unicode.IsSpace(r):
				for k+1 < len(cl) && unicode.IsSpace(rs[cl[k+1][0]]) {
					k++
				}
				add(a, cl[k][1], false)
			default:
				add(a, b, false)
			}
			k++
		}
	case "sentence":
		start := 0
		for k := 0; k < len(rs); k++ {
			if rs[k] != '.' && rs[k] != '!' && rs[k] != '?' {
				continue
			}
			e := k + 1
			for e < len(rs) && strings.ContainsRune(".!?\"')]", rs[e]) {
				e++
			}
			if e < len(rs) && !unicode.IsSpace(rs[e]) {
				k = e - 1
				continue
			}
			for e < len(rs) && unicode.IsSpace(rs[e]) {
				e++
			}
			add(start, e, false)
			start, k = e, e-1
		}
		if start < len(rs) {
			add(start, len(rs), false)
		}
	default:
		for _, c := range cl {
			add(c[0], c[1], false)
		}
	}
	return out
}

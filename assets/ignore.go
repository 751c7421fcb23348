package assets

import (
	"fmt"
	"regexp"
	"strings"
)

// ignoreRule is one line of .assetsignore, in .gitignore syntax: a
// pattern with *, ? and **; a leading / (or a / inside) anchors it to the
// directory's root, else it matches at any depth; a trailing / matches
// directories only; a leading ! re-includes what an earlier rule ignored.
type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

func parseIgnore(text string) ([]ignoreRule, error) {
	var rules []ignoreRule
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimRight(line, " ")
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			return nil, fmt.Errorf(".assetsignore line %d: an empty pattern", n+1)
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		var b strings.Builder
		if anchored {
			b.WriteString("^")
		} else {
			b.WriteString("^(?:.*/)?")
		}
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case strings.HasPrefix(line[i:], "**/"):
				b.WriteString("(?:.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "/**") && i+3 == len(line):
				b.WriteString("/.*")
				i += 2
			case c == '*':
				b.WriteString("[^/]*")
			case c == '?':
				b.WriteString("[^/]")
			case c == '\\' && i+1 < len(line):
				i++
				b.WriteString(regexp.QuoteMeta(string(line[i])))
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		b.WriteString("$")
		re, err := regexp.Compile(b.String())
		if err != nil {
			return nil, fmt.Errorf(".assetsignore line %d: %w", n+1, err)
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules, nil
}

// ignored reports whether rel (slash-separated, relative to the asset
// directory) is ignored; dir says it names a directory. A file inside an
// ignored directory is ignored: the caller skips the directory.
func ignored(rules []ignoreRule, rel string, dir bool) bool {
	out := false
	for _, r := range rules {
		if r.dirOnly && !dir {
			continue
		}
		if r.re.MatchString(rel) {
			out = !r.negate
		}
	}
	return out
}

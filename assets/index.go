package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// BlobPrefix is the reserved bucket prefix of asset bodies, each stored
// once under its SHA-256 (docs/bucket-layout.md).
const BlobPrefix = "deploy-blobs/"

// IndexName is the index object's name under a version's prefix.
const IndexName = "assets.json"

// BlobKey is the bucket key of the body with this digest.
func BlobKey(digest string) string { return BlobPrefix + digest }

// Entry is one asset: its body's SHA-256 (hex), size and Content-Type
// ("" when the extension is unknown: no Content-Type is sent).
type Entry struct {
	Digest      string `json:"sha256"`
	Size        int64  `json:"size"`
	ContentType string `json:"content_type,omitempty"`
}

// Index is what a node needs to serve a version's assets: the config,
// every asset by its URL path ("/a/b.css"), and the _headers and
// _redirects files' text.
type Index struct {
	Format    int              `json:"format"`
	Config    Config           `json:"config"`
	Files     map[string]Entry `json:"files"`
	Headers   string           `json:"headers,omitempty"`
	Redirects string           `json:"redirects,omitempty"`
}

// IndexFormat is the index's "format"; a reader refuses others.
const IndexFormat = 1

// Scanned is an Index and where each digest's body is on disk.
type Scanned struct {
	Index *Index
	Paths map[string]string // digest → file
	Bytes int64             // total size
}

// MaxTotal bounds a deployment's assets.
const MaxTotal = 1 << 30

// Scan reads the asset directory of cfg under dir (its project). It
// refuses what Cloudflare refuses (more than MaxFiles files, a file over
// 25 MiB) and what cannot be served safely (symlinks, special files,
// names that are not UTF-8), naming the file. _headers, _redirects and
// .assetsignore are rules, not assets; a path .assetsignore names (in
// .gitignore syntax) is left out.
func Scan(dir string, cfg Config) (*Scanned, error) {
	root := filepath.Join(dir, filepath.FromSlash(cfg.Directory))
	s := &Scanned{Index: &Index{Format: IndexFormat, Config: cfg, Files: map[string]Entry{}}, Paths: map[string]string{}}
	var problems []string
	var ignore []ignoreRule
	if b, err := readLimited(filepath.Join(root, ".assetsignore"), MaxRulesFile); err == nil {
		if ignore, err = parseIgnore(string(b)); err != nil {
			return nil, &ScanError{Problems: []string{"assets: " + err.Error()}}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, &ScanError{Problems: []string{fmt.Sprintf("assets: .assetsignore: %v", err)}}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && ignored(ignore, rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !utf8.ValidString(rel) {
			problems = append(problems, fmt.Sprintf("assets: %q: the file name is not UTF-8", rel))
			return nil
		}
		if !d.Type().IsRegular() {
			problems = append(problems, fmt.Sprintf("assets: %s: not a regular file (symlinks and special files are refused)", rel))
			return nil
		}
		switch rel {
		case "_headers", "_redirects":
			b, err := readLimited(p, MaxRulesFile)
			if err != nil {
				problems = append(problems, fmt.Sprintf("assets: %s: %v", rel, err))
				return nil
			}
			if rel == "_headers" {
				s.Index.Headers = string(b)
			} else {
				s.Index.Redirects = string(b)
			}
			return nil
		case ".assetsignore":
			return nil
		case "_worker.js":
			problems = append(problems, "assets: _worker.js would be served as a public asset; list it in .assetsignore or move it out of the directory")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > MaxFileSize {
			problems = append(problems, fmt.Sprintf("assets: %s is %d bytes; Cloudflare's limit is 25 MiB per file", rel, info.Size()))
			return nil
		}
		digest, err := hashFile(p)
		if err != nil {
			return err
		}
		urlPath := "/" + rel
		s.Index.Files[urlPath] = Entry{Digest: digest, Size: info.Size(), ContentType: ContentType(rel)}
		s.Paths[digest] = p
		s.Bytes += info.Size()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan assets: %w", err)
	}
	if n := len(s.Index.Files); n > MaxFiles {
		problems = append(problems, fmt.Sprintf("assets: %d files; Cloudflare's limit is %d", n, MaxFiles))
	}
	if s.Bytes > MaxTotal {
		problems = append(problems, fmt.Sprintf("assets: %d bytes in total; celld's limit is 1 GiB", s.Bytes))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, &ScanError{Problems: problems}
	}
	return s, nil
}

// ScanError lists why a directory's assets cannot be deployed.
type ScanError struct{ Problems []string }

func (e *ScanError) Error() string { return strings.Join(e.Problems, "\n") }

func readLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New("larger than 100 KiB")
	}
	return b, nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ContentType is the Content-Type served for a file name: text types carry
// charset=utf-8; an unknown extension has none (as workerd's asset server
// answers, checked on Miniflare 4.20260426).
func ContentType(name string) string {
	return contentTypes[strings.ToLower(path.Ext(name))]
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
	".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
	".cjs": "text/javascript; charset=utf-8", ".json": "application/json", ".map": "application/json",
	".webmanifest": "application/manifest+json", ".xml": "application/xml", ".txt": "text/plain; charset=utf-8",
	".md": "text/markdown; charset=utf-8", ".csv": "text/csv; charset=utf-8", ".ics": "text/calendar; charset=utf-8",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".avif": "image/avif", ".ico": "image/x-icon",
	".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff", ".apng": "image/apng",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject",
	".wasm": "application/wasm", ".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip",
	".tar": "application/x-tar", ".mp4": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".m4a": "audio/mp4",
	".flac": "audio/flac", ".opus": "audio/opus", ".rss": "application/rss+xml", ".atom": "application/atom+xml",
	".yaml": "text/yaml; charset=utf-8", ".yml": "text/yaml; charset=utf-8", ".toml": "application/toml",
	".mjml": "text/html; charset=utf-8", ".vtt": "text/vtt; charset=utf-8",
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/r2"
)

// celld r2 object get|put|delete|head|list: Wrangler's `wrangler r2
// object` shapes, plus upstream celld's flat `celld r2 get|head|put|delete|
// list BUCKET [KEY]`. Both read and write the fleet's bucket directly, as
// the binding does (package r2): no node is needed. Stdout is data; every
// message goes to stderr.

const r2ExitCodes = "Exit 0: done; 2: bad input (flags, names, files) or the bucket cannot be reached;\n" +
	"1: the object is missing or the store refused the request."

// r2PutOptions are put's metadata flags.
type r2PutOptions struct {
	File, ContentType, ContentDisposition, ContentEncoding, ContentLanguage, CacheControl string
	Expires, CustomMetadata, StorageClass                                                 string
	Pipe                                                                                  bool
}

func (o *r2PutOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "file", Aliases: []string{"f", "path"}, Usage: "read the object from this file", Destination: &o.File},
		&cli.BoolFlag{Name: "pipe", Aliases: []string{"p"}, Usage: "read the object from stdin", Destination: &o.Pipe},
		&cli.StringFlag{Name: "content-type", Aliases: []string{"ct"}, Usage: "the object's Content-Type", Destination: &o.ContentType},
		&cli.StringFlag{Name: "content-disposition", Aliases: []string{"cd"}, Usage: "the object's Content-Disposition", Destination: &o.ContentDisposition},
		&cli.StringFlag{Name: "content-encoding", Aliases: []string{"ce"}, Usage: "the object's Content-Encoding", Destination: &o.ContentEncoding},
		&cli.StringFlag{Name: "content-language", Aliases: []string{"cl"}, Usage: "the object's Content-Language", Destination: &o.ContentLanguage},
		&cli.StringFlag{Name: "cache-control", Aliases: []string{"cc"}, Usage: "the object's Cache-Control", Destination: &o.CacheControl},
		&cli.StringFlag{Name: "expires", Usage: "the object's cache expiry (an HTTP date, RFC 3339, or unix ms)", Destination: &o.Expires},
		&cli.StringFlag{Name: "custom-metadata", Aliases: []string{"metadata"}, Usage: `custom metadata as a JSON object of strings, e.g. '{"author":"ann"}'`, Destination: &o.CustomMetadata},
		&cli.StringFlag{Name: "storage-class", Aliases: []string{"s"}, Usage: "Standard or InfrequentAccess", Destination: &o.StorageClass},
	}
}

// refusedR2Flags are Wrangler flags that mean nothing here; they are
// refused rather than ignored, so nobody believes they took effect.
func refusedR2Flags() []cli.Flag {
	var out []cli.Flag
	for _, name := range []string{"local", "remote"} {
		out = append(out, &cli.BoolFlag{Name: name, Hidden: true})
	}
	out = append(out, &cli.StringFlag{Name: "jurisdiction", Aliases: []string{"J"}, Hidden: true},
		&cli.StringFlag{Name: "persist-to", Hidden: true})
	return out
}

func checkRefusedR2Flags(cmd *cli.Command) error {
	for _, name := range []string{"local", "remote", "jurisdiction", "persist-to"} {
		if cmd.IsSet(name) {
			return usageErr("celld r2 does not take --%s: celld runs neither a local miniflare store nor a Cloudflare account; its objects live in the fleet's bucket", name)
		}
	}
	return nil
}

func r2Command(g *globals) *cli.Command {
	object := &cli.Command{
		Name:  "object",
		Usage: "one object at a time (Wrangler's r2 object commands)",
		Commands: []*cli.Command{
			r2GetCommand(g, true), r2PutCommand(g, true), r2DeleteCommand(g, true), r2HeadCommand(g, true), r2ListCommand(g),
		},
	}
	root := &cli.Command{
		Name:  "r2",
		Usage: "read and write R2 objects in the fleet's bucket (no node needed)",
		Commands: []*cli.Command{
			object,
			// upstream celld's spellings: BUCKET KEY as two arguments
			r2GetCommand(g, false), r2PutCommand(g, false), r2DeleteCommand(g, false), r2HeadCommand(g, false), r2ListCommand(g),
		},
	}
	var walk func(*cli.Command)
	walk = func(c *cli.Command) {
		c.OnUsageError = onUsageError
		for _, sub := range c.Commands {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// r2Target reads BUCKET/KEY (Wrangler: split at the first "/") or, for
// the flat spelling, BUCKET KEY.
func r2Target(cmd *cli.Command, wrangler bool) (bucketName, key string, err error) {
	args := cmd.Args().Slice()
	if wrangler {
		if len(args) != 1 {
			return "", "", usageErr("%s takes one argument, BUCKET/KEY", cmd.FullName())
		}
		b, k, ok := strings.Cut(args[0], "/")
		if !ok || b == "" || k == "" {
			return "", "", usageErr("%q: the object path must be BUCKET/KEY", args[0])
		}
		bucketName, key = b, k
	} else {
		if len(args) != 2 {
			return "", "", usageErr("%s takes two arguments, BUCKET and KEY", cmd.FullName())
		}
		bucketName, key = args[0], args[1]
	}
	if err := r2.ValidateName(bucketName); err != nil {
		return "", "", &Error{Err: err, Code: ExitUsage}
	}
	if err := checkRefusedR2Flags(cmd); err != nil {
		return "", "", err
	}
	return bucketName, key, nil
}

func (g *globals) openR2(name string) (*r2.Bucket, error) {
	s, err := g.openStore()
	if err != nil {
		return nil, err
	}
	b, err := r2.Open(s, name)
	if err != nil {
		return nil, &Error{Err: err, Code: ExitUsage}
	}
	return b, nil
}

// r2Err maps an R2 failure to an exit code.
func r2Err(err error) error {
	var e *r2.Error
	if errors.As(err, &e) && e.Code != r2.CodeInternal {
		return &Error{Err: err, Code: ExitFailure}
	}
	if errors.As(err, &e) && e.Err != nil {
		return storeErr(fmt.Errorf("%w: %w", err, e.Err))
	}
	return storeErr(err)
}

func missingObject(bucketName, key string) error {
	return &Error{Err: fmt.Errorf("The specified key does not exist. (no object %q in r2 bucket %q)", key, bucketName), Code: ExitFailure}
}

func r2Usage(wrangler bool, verb, rest string) string {
	if wrangler {
		return "BUCKET/KEY" + rest
	}
	return "BUCKET KEY" + rest
}

func r2GetCommand(g *globals, wrangler bool) *cli.Command {
	var file string
	var pipe bool
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "write the object to this file (default: a file named as the key)", Destination: &file},
		&cli.BoolFlag{Name: "pipe", Aliases: []string{"p"}, Usage: "write the object's bytes to stdout", Destination: &pipe},
	}, refusedR2Flags()...)
	return &cli.Command{
		Name:        "get",
		Usage:       "download an object",
		ArgsUsage:   r2Usage(wrangler, "get", ""),
		Description: "The flat spelling (celld r2 get BUCKET KEY) writes to stdout unless --file is given.\n" + r2ExitCodes,
		Flags:       flags,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			bucketName, key, err := r2Target(cmd, wrangler)
			if err != nil {
				return err
			}
			if file != "" && pipe {
				return usageErr("pass at most one of --file and --pipe")
			}
			toStdout := pipe || (!wrangler && file == "")
			if !toStdout && file == "" {
				file = key // Wrangler: the key names the file
			}
			b, err := g.openR2(bucketName)
			if err != nil {
				return err
			}
			errw := cmd.Root().ErrWriter
			if !toStdout {
				fmt.Fprintf(errw, "Downloading %q from %q.\n", key, bucketName)
			}
			obj, rc, err := b.Get(ctx, key, r2.GetOptions{})
			if err != nil {
				return r2Err(err)
			}
			if obj == nil {
				return missingObject(bucketName, key)
			}
			defer rc.Close()
			src := withProgress(errw, rc, obj.Size, "Downloaded")
			if toStdout {
				if _, err := io.Copy(cmd.Root().Writer, src); err != nil {
					return &Error{Err: fmt.Errorf("download %s: %w", key, err), Code: ExitFailure}
				}
				return nil
			}
			if dir := filepath.Dir(file); dir != "." {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return &Error{Err: err, Code: ExitUsage}
				}
			}
			tmp := file + ".celld-part"
			f, err := os.Create(tmp)
			if err != nil {
				return &Error{Err: err, Code: ExitUsage}
			}
			_, err = io.Copy(f, src)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(tmp, file)
			}
			if err != nil {
				os.Remove(tmp)
				return &Error{Err: fmt.Errorf("download %s: %w", key, err), Code: ExitFailure}
			}
			fmt.Fprintln(errw, "Download complete.")
			return nil
		},
	}
}

func r2PutCommand(g *globals, wrangler bool) *cli.Command {
	var o r2PutOptions
	return &cli.Command{
		Name:        "put",
		Usage:       "upload an object from a file or stdin",
		ArgsUsage:   r2Usage(wrangler, "put", " (--file PATH | --pipe)"),
		Description: "Objects larger than 8 MiB go up in 8 MiB parts, two at a time.\n" + r2ExitCodes,
		Flags:       append(o.flags(), refusedR2Flags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			bucketName, key, err := r2Target(cmd, wrangler)
			if err != nil {
				return err
			}
			if (o.File == "") == !o.Pipe {
				return usageErr("pass exactly one of --file and --pipe (reading a body from a terminal by default would hang)")
			}
			po, err := o.putOptions()
			if err != nil {
				return err
			}
			var src io.Reader = os.Stdin
			size := int64(-1)
			if o.File != "" {
				f, err := os.Open(o.File)
				if err != nil {
					return &Error{Err: err, Code: ExitUsage}
				}
				defer f.Close()
				st, err := f.Stat()
				if err != nil {
					return &Error{Err: err, Code: ExitUsage}
				}
				src, size = f, st.Size()
			}
			b, err := g.openR2(bucketName)
			if err != nil {
				return err
			}
			errw := cmd.Root().ErrWriter
			boundHeap()
			fmt.Fprintf(errw, "Creating object %q in bucket %q.\n", key, bucketName)
			obj, err := b.Put(ctx, key, withProgress(errw, src, size, "Uploaded"), size, po)
			if err != nil {
				return r2Err(err)
			}
			fmt.Fprintf(errw, "Upload complete. (%d bytes, etag %s)\n", obj.Size, obj.ETag)
			return nil
		},
	}
}

func (o *r2PutOptions) putOptions() (r2.PutOptions, error) {
	po := r2.PutOptions{HTTP: r2.HTTPMetadata{
		ContentType: o.ContentType, ContentDisposition: o.ContentDisposition, ContentEncoding: o.ContentEncoding,
		ContentLanguage: o.ContentLanguage, CacheControl: o.CacheControl,
	}, StorageClass: o.StorageClass}
	if o.StorageClass != "" && o.StorageClass != "Standard" && o.StorageClass != "InfrequentAccess" {
		return po, usageErr("--storage-class %q: want Standard or InfrequentAccess", o.StorageClass)
	}
	if o.Expires != "" {
		t, err := parseExpiry(o.Expires)
		if err != nil {
			return po, usageErr("--expires %q: want an HTTP date, an RFC 3339 time or unix milliseconds", o.Expires)
		}
		po.HTTP.CacheExpiry = &t
	}
	if o.CustomMetadata != "" {
		if err := json.Unmarshal([]byte(o.CustomMetadata), &po.Custom); err != nil {
			return po, usageErr("--custom-metadata: want a JSON object of strings: %v", err)
		}
	}
	return po, nil
}

func parseExpiry(s string) (time.Time, error) {
	if t, err := http.ParseTime(s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	var ms int64
	if _, err := fmt.Sscanf(s, "%d", &ms); err == nil && fmt.Sprint(ms) == s {
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Time{}, errors.New("unparsable time")
}

func r2DeleteCommand(g *globals, wrangler bool) *cli.Command {
	return &cli.Command{
		Name:        "delete",
		Usage:       "delete an object",
		ArgsUsage:   r2Usage(wrangler, "delete", ""),
		Description: r2ExitCodes,
		Flags:       append([]cli.Flag{&cli.BoolFlag{Name: "force", Aliases: []string{"y"}, Usage: "accepted for Wrangler compatibility; celld never asks"}}, refusedR2Flags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			bucketName, key, err := r2Target(cmd, wrangler)
			if err != nil {
				return err
			}
			b, err := g.openR2(bucketName)
			if err != nil {
				return err
			}
			errw := cmd.Root().ErrWriter
			fmt.Fprintf(errw, "Deleting object %q from bucket %q.\n", key, bucketName)
			if err := b.Delete(ctx, key); err != nil {
				return r2Err(err)
			}
			fmt.Fprintln(errw, "Delete complete.")
			return nil
		},
	}
}

// r2Record is an object as head --json and list --json print it.
type r2Record struct {
	Key          string            `json:"key"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag"`
	Version      string            `json:"version,omitempty"`
	Uploaded     int64             `json:"uploaded"` // unix ms
	HTTP         *r2.HTTPMetadata  `json:"http,omitempty"`
	Custom       map[string]string `json:"custom,omitempty"`
	Checksums    map[string]string `json:"checksums,omitempty"`
	StorageClass string            `json:"storageClass,omitempty"`
}

func r2HeadCommand(g *globals, wrangler bool) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:        "head",
		Usage:       "print an object's metadata",
		ArgsUsage:   r2Usage(wrangler, "head", ""),
		Description: r2ExitCodes,
		Flags:       append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the record as JSON", Destination: &asJSON}}, refusedR2Flags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			bucketName, key, err := r2Target(cmd, wrangler)
			if err != nil {
				return err
			}
			b, err := g.openR2(bucketName)
			if err != nil {
				return err
			}
			obj, err := b.Head(ctx, key)
			if err != nil {
				return r2Err(err)
			}
			if obj == nil {
				return missingObject(bucketName, key)
			}
			w := cmd.Root().Writer
			if asJSON {
				h := obj.HTTP
				return writeJSON(w, r2Record{Key: obj.Key, Size: obj.Size, ETag: obj.ETag, Version: obj.Version,
					Uploaded: obj.Uploaded.UnixMilli(), HTTP: &h, Custom: obj.Custom, Checksums: obj.Checksums, StorageClass: obj.StorageClass})
			}
			fmt.Fprintf(w, "key: %s\nsize: %d\netag: %s\nuploaded: %s\n", obj.Key, obj.Size, obj.ETag, obj.Uploaded.UTC().Format(time.RFC3339Nano))
			for _, kv := range [][2]string{
				{"contentType", obj.HTTP.ContentType}, {"contentLanguage", obj.HTTP.ContentLanguage},
				{"contentDisposition", obj.HTTP.ContentDisposition}, {"contentEncoding", obj.HTTP.ContentEncoding},
				{"cacheControl", obj.HTTP.CacheControl},
			} {
				if kv[1] != "" {
					fmt.Fprintf(w, "http.%s: %s\n", kv[0], kv[1])
				}
			}
			if obj.HTTP.CacheExpiry != nil {
				fmt.Fprintf(w, "http.cacheExpiry: %s\n", obj.HTTP.CacheExpiry.UTC().Format(time.RFC3339))
			}
			names := make([]string, 0, len(obj.Custom))
			for k := range obj.Custom {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				fmt.Fprintf(w, "custom.%s: %s\n", k, obj.Custom[k])
			}
			return nil
		},
	}
}

func r2ListCommand(g *globals) *cli.Command {
	var prefix, after string
	var limit int
	var all, asJSON bool
	return &cli.Command{
		Name:        "list",
		Usage:       "list a bucket's keys",
		ArgsUsage:   "BUCKET",
		Description: "Prints at most --limit keys (default 1000); --all follows every page.\n" + r2ExitCodes,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "prefix", Usage: "only keys starting with this", Destination: &prefix},
			&cli.StringFlag{Name: "after", Aliases: []string{"start-after"}, Usage: "only keys after this one", Destination: &after},
			&cli.IntFlag{Name: "limit", Usage: "at most this many keys (1..1000)", Value: r2.MaxListLimit, Destination: &limit},
			&cli.BoolFlag{Name: "all", Usage: "every key, following pages", Destination: &all},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of {key,size,etag,uploaded}", Destination: &asJSON},
		}, refusedR2Flags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("%s takes one argument, BUCKET", cmd.FullName())
			}
			bucketName := cmd.Args().First()
			if err := r2.ValidateName(bucketName); err != nil {
				return &Error{Err: err, Code: ExitUsage}
			}
			if err := checkRefusedR2Flags(cmd); err != nil {
				return err
			}
			if limit < 1 || limit > r2.MaxListLimit {
				return usageErr("--limit %d: want 1..%d", limit, r2.MaxListLimit)
			}
			b, err := g.openR2(bucketName)
			if err != nil {
				return err
			}
			rows := []r2Record{}
			cursor := ""
			for {
				page, err := b.List(ctx, r2.ListOptions{Prefix: prefix, StartAfter: after, Cursor: cursor, Limit: limit})
				if err != nil {
					return r2Err(err)
				}
				for _, o := range page.Objects {
					rows = append(rows, r2Record{Key: o.Key, Size: o.Size, ETag: o.ETag, Uploaded: o.Uploaded.UnixMilli()})
				}
				if !page.Truncated {
					break
				}
				if !all {
					fmt.Fprintf(cmd.Root().ErrWriter, "more keys follow; continue with --after %q or pass --all\n", rows[len(rows)-1].Key)
					break
				}
				cursor = page.Cursor
			}
			w := cmd.Root().Writer
			if asJSON {
				return writeJSON(w, rows)
			}
			for _, r := range rows {
				fmt.Fprintln(w, r.Key)
			}
			return nil
		},
	}
}

// boundHeap keeps a transfer's heap near its working set (the parts in
// flight): the garbage the S3 client makes per part would otherwise let
// the heap grow to twice that before a collection.
func boundHeap() {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(40 << 20)
	}
}

// withProgress reports a large transfer's progress on w when w is a
// terminal, about once a second; otherwise it is r itself.
func withProgress(w io.Writer, r io.Reader, size int64, verb string) io.Reader {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) || (size >= 0 && size < 8<<20) {
		return r
	}
	p := &progressReader{r: r, w: w, size: size, verb: verb, start: time.Now()}
	return p
}

type progressReader struct {
	r     io.Reader
	w     io.Writer
	size  int64
	verb  string
	start time.Time
	n     atomic.Int64
	last  time.Time
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	done := p.n.Add(int64(n))
	if now := time.Now(); now.Sub(p.last) >= time.Second || err != nil {
		p.last = now
		rate := float64(done) / max(now.Sub(p.start).Seconds(), 0.001) / (1 << 20)
		if p.size > 0 {
			fmt.Fprintf(p.w, "\r%s %d of %d MiB (%.0f%%, %.1f MiB/s)", p.verb, done>>20, p.size>>20, 100*float64(done)/float64(p.size), rate)
		} else {
			fmt.Fprintf(p.w, "\r%s %d MiB (%.1f MiB/s)", p.verb, done>>20, rate)
		}
		if err != nil {
			fmt.Fprintln(p.w)
		}
	}
	return n, err
}

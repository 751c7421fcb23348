package server

import (
	"html"
	"net/http"
)

// writeDevErrorPage answers a browser whose request made the Worker throw.
func writeDevErrorPage(w http.ResponseWriter, r *http.Request, exception string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`<!doctype html><html><head><meta charset="utf-8"><title>Worker threw an exception</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:3em auto;max-width:50em;padding:0 1em}code{background:#f3f3f3;padding:.1em .3em}</style></head>
<body><h1>500: the Worker threw an exception</h1>
<p>While handling <code>` + html.EscapeString(r.Method+" "+r.URL.RequestURI()) + `</code>.</p>
<pre style="background:#fff4f4;border-left:4px solid #d33;padding:1em;overflow:auto">` + html.EscapeString(exception) + `</pre>
<p>The exception is printed in the <code>celld dev</code> terminal too.</p>
<p>This page is shown only by <code>celld dev</code> and only to browsers; a deployed fleet answers <code>Internal Server Error</code>, as Cloudflare does.</p>
</body></html>
`))
}

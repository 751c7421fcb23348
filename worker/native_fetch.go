package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/dop251/goja"
)

// outbound is the client for fetch() to the network. Connections are kept
// alive across requests of every isolate. A response must begin within
// five minutes; its body, streamed to the script, may take as long as the
// script reads it (a dropped body is closed: stream_in.go).
var outbound = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
	},
}

type redirectModeKey struct{}

func init() {
	outbound.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		switch req.Context().Value(redirectModeKey{}) {
		case "manual":
			return http.ErrUseLastResponse
		case "error":
			return errors.New("redirect mode is \"error\"")
		}
		if len(via) >= 20 {
			return errors.New("too many redirects")
		}
		return nil
	}
}

// registerFetchNatives adds httpFetch(method, url, flatHeaders, body|null,
// redirect) -> Promise<outcome>, the network side of fetch().
func registerFetchNatives(set func(string, nativeFunc)) {
	set("httpFetch", func(iso *isolate, call goja.FunctionCall) goja.Value {
		method, url := call.Argument(0).String(), call.Argument(1).String()
		header := iso.headerArg(call.Argument(2))
		var body []byte
		if b := call.Argument(3); !goja.IsNull(b) && !goja.IsUndefined(b) {
			body = append([]byte{}, iso.bytesArg(b)...)
		}
		redirect := call.Argument(4).String()
		cctx, settle := iso.scope.callContext(iso.ctx)
		ctx := context.WithValue(cctx, redirectModeKey{}, redirect)
		host := &Host{iso: iso}
		gate, obj := iso.rt.cfg.OutputGate, iso.obj
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			if gate != nil && obj != nil {
				if err := gate(ctx, obj.class, obj.id); err != nil {
					settle()
					return func(vm *goja.Runtime) (goja.Value, error) {
						out := vm.NewObject()
						_ = out.Set("ok", false)
						_ = out.Set("error", "celld: fetch withheld: the object's writes could not be confirmed durable: "+err.Error())
						return out, nil
					}
				}
			}
			resp, final, err := doOutbound(ctx, method, url, header, body)
			if err != nil {
				settle()
			} else {
				resp.Stream = &settleOnClose{ReadCloser: resp.Stream, settle: settle}
			}
			return func(vm *goja.Runtime) (goja.Value, error) {
				if err != nil {
					out := vm.NewObject()
					_ = out.Set("ok", false)
					_ = out.Set("error", "Network connection lost: "+err.Error())
					return out, nil
				}
				out := iso.responseOutcome(resp).(*goja.Object)
				_ = out.Set("url", final)
				_ = out.Set("redirected", final != url)
				return out, nil
			}
		})
	})
}

func doOutbound(ctx context.Context, method, url string, header http.Header, body []byte) (*Response, string, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, "", err
	}
	req.Header = header
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "celld")
	}
	resp, err := outbound.Do(req)
	if err != nil {
		return nil, "", err
	}
	status := resp.Status
	if len(status) > 4 {
		status = status[4:]
	}
	// The body streams into the script (a ReadableStream that pulls from
	// it): a proxied download starts at once and is never held whole.
	return &Response{Status: resp.StatusCode, StatusText: status, Header: resp.Header, Stream: resp.Body}, resp.Request.URL.String(), nil
}

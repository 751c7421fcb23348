package host

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
)

func nopHandler(*cell.DB, []byte) ([]byte, error) { return nil, nil }

func TestRegistry_Split(t *testing.T) {
	r := NewRegistry(Kind{Name: "kv", Handler: nopHandler},
		Kind{Name: "q", Handler: nopHandler, CheckID: func(id string) error {
			if strings.HasPrefix(id, "-") {
				return errors.New("a queue name starts with a letter")
			}
			return nil
		}})
	for _, tc := range []struct{ name, kind, id, err string }{
		{"kv:ns-1", "kv", "ns-1", ""},
		{"q:jobs", "q", "jobs", ""},
		{"q:-jobs", "", "", "a queue name starts with a letter"},
		{"kv:", "", "", "the id must be"},
		{"kv:..", "", "", "the id must be"},
		{"kv:a/b", "", "", "the id must be"},
		{"d1:db", "", "", `"d1:db" is not a built-in cell (kinds: kv, q)`},
		{"kv", "", "", "is not a built-in cell"},
	} {
		k, id, err := r.Split(tc.name)
		switch {
		case tc.err == "" && (err != nil || k.Name != tc.kind || id != tc.id):
			t.Errorf("Split(%q) = %q %q %v, want %q %q", tc.name, k.Name, id, err, tc.kind, tc.id)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Split(%q) error %v, want one containing %q", tc.name, err, tc.err)
		}
	}
}

func TestRegistry_RefusesADuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a kind registered twice did not panic")
		}
	}()
	NewRegistry(Kind{Name: "kv", Handler: nopHandler}, Kind{Name: "kv", Handler: nopHandler})
}

type fakePoster struct {
	status int
	body   string
	err    error
	query  url.Values
}

func (f *fakePoster) PostPeer(_ context.Context, path string, q url.Values, _ []byte) (int, []byte, error) {
	if path != fleet.PeerCellCallPath {
		return 0, nil, errors.New("wrong path " + path)
	}
	f.query = q
	return f.status, []byte(f.body), f.err
}

func TestCallPeerCell_ClassifiesAnswers(t *testing.T) {
	ctx := context.Background()
	p := &fakePoster{status: http.StatusOK, body: "answer"}
	out, err := CallPeerCell(ctx, p, "n1", "kv:ns", []byte("req"))
	if err != nil || string(out) != "answer" || p.query.Get("cell") != "kv:ns" {
		t.Fatalf("200: %q %v (query %v)", out, err, p.query)
	}

	p = &fakePoster{status: http.StatusUnprocessableEntity, body: `{"error":"no such table: t","code":"D1_ERROR"}`}
	_, err = CallPeerCell(ctx, p, "n1", "d1:db", nil)
	var re *RequestError
	if !errors.As(err, &re) || re.Message != "no such table: t" || re.Code != "D1_ERROR" {
		t.Fatalf("422: %#v", err)
	}

	for _, st := range []int{http.StatusMisdirectedRequest, http.StatusServiceUnavailable, http.StatusBadRequest} {
		_, err = CallPeerCell(ctx, &fakePoster{status: st, body: "nope\n"}, "n1", "kv:ns", nil)
		var pe *PeerError
		if !errors.As(err, &pe) || pe.Status != st || pe.Retry() != (st != http.StatusBadRequest) || pe.Error() != "node n1 answered "+strconv.Itoa(st)+": nope" {
			t.Errorf("%d: %v (retry %v)", st, err, pe != nil && pe.Retry())
		}
	}
	boom := errors.New("dial refused")
	if _, err = CallPeerCell(ctx, &fakePoster{err: boom}, "n1", "kv:ns", nil); !errors.Is(err, boom) {
		t.Fatalf("transport error: %v", err)
	}
}

type codedErr struct{}

func (codedErr) Error() string     { return "D1_ERROR: boom" }
func (codedErr) ErrorCode() string { return "D1_ERROR" }

func TestRequestError_CarriesTheCode(t *testing.T) {
	re := requestError(codedErr{})
	if re.Message != "D1_ERROR: boom" || re.Code != "D1_ERROR" {
		t.Fatalf("%+v", re)
	}
	if got := PeerRefusal(re); got.Error != re.Message || got.Code != re.Code {
		t.Fatalf("%+v", got)
	}
}

package bucket_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/bucket/buckettest"
	"github.com/celldgo/celld/internal/miniotest"
)

func openS3(t testing.TB, srv *miniotest.Server, bkt, prefix string) *bucket.S3 {
	t.Helper()
	s, err := bucket.NewS3(bucket.S3Config{
		Bucket:   bkt,
		Prefix:   prefix,
		Endpoint: srv.Endpoint,
		Creds:    credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func randName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func TestS3_Contract(t *testing.T) {
	srv := miniotest.Shared(t)
	t.Run("BucketPerTest", func(t *testing.T) {
		buckettest.Run(t, func(t *testing.T) bucket.Store {
			return openS3(t, srv, srv.NewBucket(t), "")
		}, buckettest.Options{})
	})
	// Prefix "p/q" in a bucket that also holds keys just outside it: the
	// store must neither see nor touch them.
	t.Run("PrefixPQ", func(t *testing.T) {
		decoys := []string{"p/q", "p/qx", "p/q0/k", "p/r/k", "p/q-", "zzz"}
		buckettest.Run(t, func(t *testing.T) bucket.Store {
			bkt := srv.NewBucket(t)
			raw := openS3(t, srv, bkt, "")
			for _, k := range decoys {
				if _, err := raw.Put(tctx(t), k, []byte("decoy "+k), bucket.Cond{}); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() {
				for _, k := range decoys {
					got, _, err := raw.Get(tctx(t), k)
					if err != nil || string(got) != "decoy "+k {
						t.Errorf("decoy %s outside the prefix changed: %q, %v", k, got, err)
					}
				}
			})
			return openS3(t, srv, bkt, "p/q")
		}, buckettest.Options{})
	})
	// Many stores in one bucket, told apart only by their prefixes.
	t.Run("RandomPrefixOneBucket", func(t *testing.T) {
		bkt := srv.NewBucket(t)
		buckettest.Run(t, func(t *testing.T) bucket.Store {
			return openS3(t, srv, bkt, "run/"+randName())
		}, buckettest.Options{})
	})
}

func TestS3_String(t *testing.T) {
	s, err := bucket.NewS3(bucket.S3Config{Bucket: "bkt", Prefix: "p/q/", Endpoint: "http://127.0.0.1:9000"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "s3://bkt/p/q at http://127.0.0.1:9000"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	s, err = bucket.NewS3(bucket.S3Config{Bucket: "bkt", Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "s3://bkt at https://s3.eu-west-1.amazonaws.com"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	for _, ep := range []string{"127.0.0.1:9000", "ftp://h", "http://h/path", "http://"} {
		if _, err := bucket.NewS3(bucket.S3Config{Bucket: "bkt", Endpoint: ep}); err == nil {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
}

func wantErr(t *testing.T, what string, err, sentinel error, outcome bucket.Outcome) {
	t.Helper()
	if !errors.Is(err, sentinel) || bucket.OutcomeOf(err) != outcome {
		t.Fatalf("%s: got %v (outcome %v), want %v with outcome %v", what, err, bucket.OutcomeOf(err), sentinel, outcome)
	}
}

func TestS3_ClassifiesRealAnswers(t *testing.T) {
	srv := miniotest.Shared(t)
	s := openS3(t, srv, srv.NewBucket(t), "")

	_, err := s.Put(tctx(t), "missing", []byte("x"), bucket.IfMatch("0123456789abcdef0123456789abcdef"))
	wantErr(t, "IfMatch on a missing key", err, bucket.ErrRejected, bucket.Rejected)

	nb := openS3(t, srv, "celld-no-such-"+randName(), "")
	_, err = nb.Put(tctx(t), "k", []byte("x"), bucket.IfAbsent())
	wantErr(t, "put to a missing bucket", err, bucket.ErrNoBucket, bucket.Failed)
	_, _, err = nb.Get(tctx(t), "k")
	wantErr(t, "get from a missing bucket", err, bucket.ErrNoBucket, bucket.Failed)

	bad := &miniotest.Server{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: "wrong" + srv.SecretKey}
	denied := openS3(t, bad, srv.NewBucket(t), "")
	_, err = denied.Put(tctx(t), "k", []byte("x"), bucket.IfAbsent())
	wantErr(t, "put with a wrong secret", err, bucket.ErrDenied, bucket.Failed)
	_, err = denied.List(tctx(t), "", "", 10)
	wantErr(t, "list with a wrong secret", err, bucket.ErrDenied, bucket.Failed)

	closed := &miniotest.Server{Endpoint: "http://" + closedAddr(t), AccessKey: "a", SecretKey: "b"}
	down := openS3(t, closed, "bkt", "")
	_, err = down.Put(tctx(t), "k", []byte("x"), bucket.IfAbsent())
	wantErr(t, "put to a closed port", err, bucket.ErrUnavailable, bucket.Failed)
	_, _, err = down.Get(tctx(t), "k")
	wantErr(t, "get from a closed port", err, bucket.ErrUnavailable, bucket.Failed)
}

// A server that goes away mid-life: reads are unavailable, writes never
// claim to be applied or rejected.
func TestS3_ServerStopped(t *testing.T) {
	srv := miniotest.Start(t)
	s := openS3(t, srv, srv.NewBucket(t), "")
	o, err := s.Put(tctx(t), "k", []byte("v"), bucket.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	_, _, err = s.Get(tctx(t), "k")
	wantErr(t, "get after stop", err, bucket.ErrUnavailable, bucket.Failed)
	_, err = s.Put(tctx(t), "k", []byte("w"), bucket.IfMatch(o.ETag))
	if oc := bucket.OutcomeOf(err); oc != bucket.Failed && oc != bucket.Ambiguous {
		t.Fatalf("put after stop: %v (outcome %v), want failed or ambiguous", err, oc)
	}
}

// fakeS3 answers every request with status and counts them.
func fakeS3(t *testing.T, status int) (*bucket.S3, *atomic.Int32) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>`))
	}))
	t.Cleanup(ts.Close)
	s, err := bucket.NewS3(bucket.S3Config{Bucket: "bkt", Endpoint: ts.URL, Creds: credentials.NewStaticV4("a", "b", "")})
	if err != nil {
		t.Fatal(err)
	}
	return s, &n
}

// minio-go retries 5xx (and SlowDown) up to MaxRetries times, re-sending
// the body. A conditional write must go out once, or a retry could meet
// its own applied first attempt and report "rejected".
func TestS3_PutIsSentOnce(t *testing.T) {
	s, n := fakeS3(t, http.StatusServiceUnavailable)
	_, err := s.Put(tctx(t), "k", []byte("v"), bucket.IfAbsent())
	wantErr(t, "put answered 503", err, bucket.ErrAmbiguous, bucket.Ambiguous)
	if got := n.Load(); got != 1 {
		t.Fatalf("put sent %d times, want 1", got)
	}
	n.Store(0)
	_, _, err = s.Get(tctx(t), "k")
	wantErr(t, "get answered 503", err, bucket.ErrUnavailable, bucket.Failed)
	if got := n.Load(); got < 2 {
		t.Fatalf("get sent %d times; reads should be retried", got)
	}
}

type failingProvider struct{ credentials.Expiry }

func (failingProvider) Retrieve() (credentials.Value, error) {
	return credentials.Value{}, errors.New("no credentials (injected)")
}

func (p failingProvider) RetrieveWithCredContext(*credentials.CredContext) (credentials.Value, error) {
	return p.Retrieve()
}

func (failingProvider) IsExpired() bool { return true }

// A write that fails before it leaves the client is not ambiguous.
func TestS3_PutFailingBeforeSendIsUnavailable(t *testing.T) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	t.Cleanup(ts.Close)
	s, err := bucket.NewS3(bucket.S3Config{Bucket: "bkt", Endpoint: ts.URL, Creds: credentials.New(failingProvider{})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(tctx(t), "k", []byte("v"), bucket.IfAbsent())
	wantErr(t, "put without credentials", err, bucket.ErrUnavailable, bucket.Failed)
	if !strings.Contains(err.Error(), "injected") || n.Load() != 0 {
		t.Fatalf("err %v after %d requests; want the provider's error and no request", err, n.Load())
	}
}

// The store returns what the server sent and the object's full size.
func TestS3_RangeReportsObjectSize(t *testing.T) {
	srv := miniotest.Shared(t)
	s := openS3(t, srv, srv.NewBucket(t), "x")
	data := bytes.Repeat([]byte("0123456789"), 100)
	if _, err := s.Put(tctx(t), "r", data, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	got, o, err := s.GetRange(tctx(t), "r", bucket.Bytes(10, 19))
	if err != nil || !bytes.Equal(got, data[10:20]) || o.Size != 1000 {
		t.Fatalf("range = %q, %+v, %v; want %q and size 1000", got, o, err, data[10:20])
	}
	if _, _, err := s.GetRange(tctx(t), "r", bucket.Bytes(5, 3)); !errors.Is(err, bucket.ErrInvalidRange) {
		t.Fatalf("inverted range: %v", err)
	}
	if _, err := s.Put(tctx(t), "empty", nil, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetRange(tctx(t), "empty", bucket.From(0)); !errors.Is(err, bucket.ErrInvalidRange) {
		t.Fatalf("From(0) of an empty object: %v, want ErrInvalidRange (as Range.Resolve says)", err)
	}
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestS3_Objects(t *testing.T) {
	srv := miniotest.Shared(t)
	buckettest.RunObjects(t, func(t *testing.T) bucket.Objects {
		return openS3(t, srv, srv.NewBucket(t), "")
	}, buckettest.ObjectOptions{MinIOKeys: true})
}

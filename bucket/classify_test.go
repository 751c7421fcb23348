package bucket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	readErr := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	var (
		none    = Cond{}
		absent  = IfAbsent()
		ifMatch = IfMatch("abc")
	)
	tests := []struct {
		name string
		op   Op
		cond Cond
		r    Reply
		want error // nil: applied
		out  Outcome
	}{
		{"200 put", OpWrite, absent, Reply{Status: 200}, nil, Applied},
		{"206 ranged read", OpRead, none, Reply{Status: 206}, nil, Applied},
		{"204 delete", OpDelete, none, Reply{Status: 204}, nil, Applied},
		{"412 create", OpWrite, absent, Reply{Status: 412, Code: "PreconditionFailed"}, ErrRejected, Rejected},
		{"412 cas", OpWrite, ifMatch, Reply{Status: 412, Code: "PreconditionFailed"}, ErrRejected, Rejected},
		{"409 conditional conflict create", OpWrite, absent, Reply{Status: 409, Code: "ConditionalRequestConflict"}, ErrRejected, Rejected},
		{"409 conditional conflict cas", OpWrite, ifMatch, Reply{Status: 409, Code: "ConditionalRequestConflict"}, ErrRejected, Rejected},
		{"409 other code is not a lost race", OpWrite, ifMatch, Reply{Status: 409, Code: "OperationAborted"}, nil, Failed},
		{"404 on If-Match (MinIO)", OpWrite, ifMatch, Reply{Status: 404, Code: "NoSuchKey"}, ErrRejected, Rejected},
		{"404 NoSuchBucket on If-Match", OpWrite, ifMatch, Reply{Status: 404, Code: "NoSuchBucket"}, ErrNoBucket, Failed},
		{"404 on create is not a rejection", OpWrite, absent, Reply{Status: 404, Code: "NoSuchKey"}, ErrNotFound, NotFound},
		{"412 on unconditional put", OpWrite, none, Reply{Status: 412}, nil, Failed},
		{"404 read", OpRead, none, Reply{Status: 404, Code: "NoSuchKey"}, ErrNotFound, NotFound},
		{"404 no bucket read", OpRead, none, Reply{Status: 404, Code: "NoSuchBucket"}, ErrNoBucket, Failed},
		{"416 range", OpRead, none, Reply{Status: 416, Code: "InvalidRange"}, ErrInvalidRange, Failed},
		{"403 denied", OpWrite, absent, Reply{Status: 403, Code: "AccessDenied"}, ErrDenied, Failed},
		{"403 bad signature", OpRead, none, Reply{Status: 403, Code: "SignatureDoesNotMatch"}, ErrDenied, Failed},
		{"401", OpRead, none, Reply{Status: 401}, ErrDenied, Failed},
		{"500 write", OpWrite, ifMatch, Reply{Status: 500, Code: "InternalError"}, ErrAmbiguous, Ambiguous},
		{"503 write", OpWrite, absent, Reply{Status: 503, Code: "SlowDown"}, ErrAmbiguous, Ambiguous},
		{"503 unconditional write", OpWrite, none, Reply{Status: 503}, ErrAmbiguous, Ambiguous},
		{"429 write", OpWrite, none, Reply{Status: 429}, ErrAmbiguous, Ambiguous},
		{"408 write", OpWrite, none, Reply{Status: 408}, ErrAmbiguous, Ambiguous},
		{"503 read", OpRead, none, Reply{Status: 503}, ErrUnavailable, Failed},
		{"500 delete", OpDelete, none, Reply{Status: 500}, ErrUnavailable, Failed},
		{"400", OpWrite, none, Reply{Status: 400, Code: "InvalidArgument"}, nil, Failed},
		{"refused before send", OpWrite, absent, Reply{Err: dialErr}, ErrUnavailable, Failed},
		{"dns failure", OpWrite, absent, Reply{Err: &net.DNSError{Err: "no such host", Name: "x"}}, ErrUnavailable, Failed},
		{"reset after send", OpWrite, absent, Reply{Err: readErr}, ErrAmbiguous, Ambiguous},
		{"timeout after send", OpWrite, ifMatch, Reply{Err: context.DeadlineExceeded}, ErrAmbiguous, Ambiguous},
		{"timeout on read", OpRead, none, Reply{Err: context.DeadlineExceeded}, ErrUnavailable, Failed},
		{"our own not-sent", OpWrite, absent, Reply{Err: fmt.Errorf("x: %w", errNotSent)}, ErrUnavailable, Failed},
	}
	sentinels := []error{ErrNotFound, ErrRejected, ErrAmbiguous, ErrUnavailable, ErrDenied, ErrNoBucket, ErrInvalidRange}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Classify(tc.op, tc.cond, tc.r)
			if got := OutcomeOf(err); got != tc.out {
				t.Errorf("outcome = %v, want %v (err %v)", got, tc.out, err)
			}
			if tc.out == Applied {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("got nil error")
			}
			// Exactly the expected sentinel (or none), never two.
			for _, s := range sentinels {
				if is := errors.Is(err, s); is != (s == tc.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, s, is)
				}
			}
		})
	}
}

func TestMem_Faults(t *testing.T) {
	ctx := context.Background()
	t.Run("lost response after applied write is ambiguous, and the write landed", func(t *testing.T) {
		m := NewMem()
		m.SetFaults(func(c Call) Fault { return Fault{LoseResponse: c.Method == "put"} })
		_, err := m.Put(ctx, "k", []byte("v"), IfAbsent())
		if OutcomeOf(err) != Ambiguous {
			t.Fatalf("got %v, want ambiguous", err)
		}
		m.SetFaults(nil)
		got, _, err := m.Get(ctx, "k")
		if err != nil || string(got) != "v" {
			t.Fatalf("get = %q, %v; want the applied write", got, err)
		}
	})
	t.Run("5xx without apply leaves nothing", func(t *testing.T) {
		m := NewMem()
		m.SetFaults(func(c Call) Fault { return Fault{Status: 503} })
		if _, err := m.Put(ctx, "k", []byte("v"), IfAbsent()); OutcomeOf(err) != Ambiguous {
			t.Fatalf("put: %v", err)
		}
		if _, _, err := m.Get(ctx, "k"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("get during outage: %v", err)
		}
		m.SetFaults(nil)
		if _, _, err := m.Get(ctx, "k"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get after outage: %v, want not found", err)
		}
	})
	t.Run("5xx after apply", func(t *testing.T) {
		m := NewMem()
		m.SetFaults(func(c Call) Fault { return Fault{Status: 500, Apply: true} })
		if _, err := m.Put(ctx, "k", []byte("v"), IfAbsent()); OutcomeOf(err) != Ambiguous {
			t.Fatalf("put: %v", err)
		}
		m.SetFaults(nil)
		if _, _, err := m.Get(ctx, "k"); err != nil {
			t.Fatalf("get: %v, want the applied write", err)
		}
	})
	t.Run("racing writer makes a CAS lose", func(t *testing.T) {
		m := NewMem()
		o, _ := m.Put(ctx, "k", []byte("v1"), IfAbsent())
		raced := false
		m.SetFaults(func(c Call) Fault {
			if c.Method != "put" || raced {
				return Fault{}
			}
			raced = true
			return Fault{Race: func(s Store) { s.Put(ctx, "k", []byte("racer"), Cond{}) }}
		})
		if _, err := m.Put(ctx, "k", []byte("v2"), IfMatch(o.ETag)); OutcomeOf(err) != Rejected {
			t.Fatalf("CAS after a racing write: %v, want rejected", err)
		}
	})
	t.Run("latency honours the context", func(t *testing.T) {
		m := NewMem()
		m.SetFaults(func(c Call) Fault { return Fault{Latency: 1 << 40} })
		c, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
		defer cancel()
		if _, err := m.Put(c, "k", nil, IfAbsent()); OutcomeOf(err) != Ambiguous {
			t.Fatalf("put that timed out: %v, want ambiguous", err)
		}
		m.SetFaults(nil)
		if _, err := m.Head(ctx, "k"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("head: %v, want not found (the delayed put never ran)", err)
		}
	})
}

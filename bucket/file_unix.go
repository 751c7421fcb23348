//go:build linux || darwin

package bucket

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// fileStat is what the file store needs from fstat: the generation (inode
// and change time) that goes into an ETag, and the object's metadata.
type fileStat struct {
	ino     uint64
	ctime   int64 // nanoseconds since the epoch
	size    int64
	mtime   time.Time
	regular bool
}

func statOf(st *unix.Stat_t) fileStat {
	return fileStat{
		ino:     uint64(st.Ino),
		ctime:   st.Ctim.Nano(),
		size:    st.Size,
		mtime:   time.Unix(0, st.Mtim.Nano()),
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG,
	}
}

// statFile fstats an open file.
func statFile(f *os.File) (fileStat, error) {
	var st unix.Stat_t
	rc, err := f.SyscallConn()
	if err != nil {
		return fileStat{}, err
	}
	if cerr := rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) }); cerr != nil {
		return fileStat{}, cerr
	}
	if err != nil {
		return fileStat{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return statOf(&st), nil
}

// statPath stats a path, following symlinks as open does.
func statPath(p string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fileStat{}, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	return statOf(&st), nil
}

// tryLock takes an exclusive flock on f without blocking. It reports false
// when another open file description holds the lock.
func tryLock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	if cerr := rc.Control(func(fd uintptr) {
		for {
			err = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}); cerr != nil {
		return false, cerr
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return true, nil
}

// unlockFile releases f's flock (closing f would too).
func unlockFile(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.Flock(int(fd), unix.LOCK_UN) })
	}
}

// lock takes key's stripe: first the in-process lock, then an exclusive
// flock on the stripe's lock file. Waiting honours ctx; the caller must
// call unlock.
func (s *File) lock(ctx context.Context, key string) (unlock func(), err error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	i := h.Sum32() % fileStripes
	select {
	case s.stripes[i] <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	release := func() { <-s.stripes[i] }
	name := filepath.Join(s.lockDir(), fmt.Sprint(i))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if missing(err) {
		if err = os.MkdirAll(s.lockDir(), 0o755); err == nil {
			f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("lock: %w: %w", errNotSent, fsErr(err))
	}
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			release()
			return nil, fmt.Errorf("lock: %w: %w", errNotSent, fsErr(err))
		}
		if ok {
			return func() { unlockFile(f); f.Close(); release() }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			f.Close()
			release()
			return nil, ctxErr(ctx)
		}
	}
}

// changedAfter bumps f's change time (by a no-op chmod) until it is later
// than ctime, waiting out a coarse clock tick, for at most two seconds.
func changedAfter(f *os.File, ctime int64) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		st, err := statFile(f)
		if err != nil || st.ctime > ctime || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
		if err := f.Chmod(0o644); err != nil {
			return err
		}
	}
}

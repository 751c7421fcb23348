package cell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/celldgo/celld/bucket"
	"github.com/superfly/ltx"
	sqlite3 "modernc.org/sqlite/lib"
)

// Replication turns every committed transaction of a cell into LTX, the
// format Litestream reads, and uploads it under the cell's epoch prefix:
//
//	cells/<cell>/ltx/e<epoch:016x>/<minTXID:016x>-<maxTXID:016x>.ltx
//
// Capture runs in the WAL hook, on the cell's goroutine, right after each
// commit: it reads the transaction's frames from the -wal file, validates
// them, and folds the pages into the database checksum that LTX carries
// (the XOR of a CRC-64 of every page, updated page by page). Each commit is
// one TXID. A single uploader goroutine ships what was captured: while one
// upload is in flight, later commits join one pending batch that goes out
// next as one LTX spanning their TXIDs (group commit). The pages themselves
// stay in the WAL until their upload finished, which is why only the
// replicator checkpoints, and only when nothing captured is waiting.
//
// Compaction (compact.go) keeps the objects a restore reads bounded however
// long the history: full snapshots — an LTX with minTXID 1 holding every
// page — written into the current epoch, and between them merged files
// that stand for runs of segments.
//
// The replicator decides what is durable; it does not decide what may be
// released: the output gate waits with WaitDurable and then re-checks
// ownership.

// DefaultSnapshotSegments is ReplicatorConfig.SnapshotSegments's default.
const DefaultSnapshotSegments = 16

// InlineSnapshotBytes is the largest database whose compaction snapshot
// is uploaded in place of the next segment (it then costs one upload, not
// one beside the segment's); larger ones are written in the background.
const InlineSnapshotBytes = 64 << 10

// ErrReplicatorClosed is returned by waits on a closed replicator for
// transactions it never made durable.
var ErrReplicatorClosed = errors.New("replicator closed")

// ReplicatorConfig says where a cell replicates to and from where.
type ReplicatorConfig struct {
	Store bucket.Store
	Cell  string
	// Epoch is this activation's epoch: every object goes under its prefix.
	Epoch uint64
	// From is where the local file stands, as Restore reported it. The
	// zero value is a new cell: the first LTX is then a snapshot of the
	// whole file. With a non-zero Checksum, the file must match it.
	From   RestoreInfo
	Logger *slog.Logger // nil: discard

	// SnapshotSegments is how many LTX segments follow the newest snapshot
	// at least before another is written (a database up to
	// InlineSnapshotBytes gets one then; a larger one when it is also
	// cheap enough, see compact.go). Default DefaultSnapshotSegments.
	SnapshotSegments int
	// MergeSegments is how many objects of one level are merged into one
	// of the next (compact.go). Zero: DefaultMergeSegments; negative:
	// never merge (snapshots every SnapshotSegments segments then).
	MergeSegments int
	// Fleet, when set, is fleet durability (fleet.go): batches go to the
	// replication group first and to the bucket behind. Merges are off.
	Fleet Fleet
}

// ReplicatorStats are counters of one replicator since it started.
type ReplicatorStats struct {
	Captured  uint64 // last captured TXID
	Durable   uint64 // last TXID known to be in the bucket
	Segments  int    // LTX segments uploaded
	Snapshots int    // compaction snapshots uploaded
	Merges    int    // merged LTX files uploaded
	Bytes     int64  // LTX bytes uploaded
	Retries   int    // uploads that failed and were tried again
}

// batch is the work of one LTX file: the transactions minTXID..maxTXID, or
// a full snapshot of the database at maxTXID.
type batch struct {
	min, max  uint64
	pre, post ltx.Checksum // database checksum before min, after max
	commit    uint32       // database size in pages after max
	pages     map[uint32]pageRef
	// full encodes every page 1..commit, reading those not in the map from
	// the database file (which holds them since the last checkpoint). A
	// full batch has min 1, which is what LTX calls a snapshot.
	full bool
	// merge: a merged file (compact.go) uploaded in the background; file
	// holds the pages it reads from the database file, with the checksum
	// each must have.
	merge bool
	file  map[uint32]ltx.Checksum
	done  chan struct{} // snapshots and merges: closed when finished, err set
	// inline: a snapshot the uploader ships in place of a segment.
	inline bool
	err    error
}

// Replicator captures one cell's commits and uploads them as LTX. Capture,
// Checkpoint, Snapshot and Close run on the cell's goroutine (as every
// other call on the DB); Captured, Durable, WaitDurable, Err and Stats may
// be called from any goroutine.
type Replicator struct {
	db  *DB
	cfg ReplicatorConfig
	log *slog.Logger
	dbf cellFile // the database file, for pages not in the WAL (files.go)
	// filesMu is held (read) by uploads while they read dbf and the WAL,
	// and (write) while those are swapped for the replicator's own
	// (ownFiles), so no read goes through a descriptor the connection
	// closed.
	filesMu sync.RWMutex

	// The cell's goroutine only.
	wal       *walFollower
	state     dbState            // the database as of the last capture
	walIndex  map[uint32]pageRef // newest frame of each page since the last checkpoint
	segs      int                // segments begun since the newest snapshot
	segBytes  int64              // page bytes captured since the newest snapshot
	walFrames int64              // frames in the WAL at the last commit
	lv        []level            // merge levels 1..mergeLevels (compact.go)
	topRuns   int                // top-level merged files since the newest snapshot
	closing   bool

	captured atomic.Uint64

	mu        sync.Mutex
	pending   []*batch // captured, waiting for the uploader; oldest first
	open      *batch   // the batch new commits join (last of pending), or nil
	uploading bool
	snap      *batch // snapshot being written
	merging   int    // merges being written
	lastSnap  uint64 // maxTXID of the newest full LTX started
	durable   uint64
	err       error // fatal: nothing more will become durable
	closed    bool
	changed   chan struct{} // closed and replaced when durable, err or closed change
	stats     ReplicatorStats
	// The objects a restore of the durable state applies (see Seal);
	// chainKnown is false when they are not all known.
	chain      []segment
	chainKnown bool
	chainSnap  uint64 // maxTXID of the newest snapshot in chain
	// Fleet mode (fleet.go).
	fleetDurable uint64   // last TXID the group proved
	upq          []queued // proven (or not) batches waiting for their upload
	upBusy       bool     // an upload of upq in flight
	flushing     bool     // Close: upload the queue now
	upKick       chan struct{}

	kick   chan struct{}
	ctx    context.Context // ends at Close: stops uploads
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewReplicator starts replicating db. It checkpoints the WAL first, so the
// database file holds every committed page, and computes the file's
// checksum; from then on it captures every commit. Call it on the cell's
// goroutine, outside a transaction, once per epoch: two replicators writing
// the same epoch would fork its history.
func NewReplicator(db *DB, cfg ReplicatorConfig) (*Replicator, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	switch {
	case cfg.Store == nil:
		return nil, errors.New("start replicator: no store")
	case cfg.Cell == "":
		return nil, errors.New("start replicator: no cell name")
	case cfg.Epoch == 0:
		return nil, errors.New("start replicator: epoch 0 (epochs start at 1)")
	case db.afterCommit != nil:
		return nil, errors.New("start replicator: the database already has one")
	case !db.c.autocommit():
		return nil, errors.New("start replicator: a transaction is open")
	}
	if err := bucket.CheckKey(LTXKey(cfg.Cell, cfg.Epoch, 1, 1)); err != nil {
		return nil, fmt.Errorf("start replicator: cell name: %w", err)
	}
	if cfg.SnapshotSegments <= 0 {
		cfg.SnapshotSegments = DefaultSnapshotSegments
	}
	if cfg.MergeSegments == 0 {
		cfg.MergeSegments = DefaultMergeSegments
	}
	if cfg.Fleet != nil {
		cfg.MergeSegments = -1 // see fleet.go
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ps, err := db.c.queryInt("PRAGMA page_size")
	if err != nil {
		return nil, fmt.Errorf("start replicator: %w", err)
	}
	// A restored file whose WAL is still empty has had no commit since
	// the restore, so its checksums need not be computed again.
	restored := cfg.From.state
	if fi, err := os.Stat(db.path + "-wal"); err == nil && fi.Size() > 0 {
		restored = nil
	}
	done, err := db.c.checkpointTruncate()
	if err == nil && !done {
		err = errors.New("busy")
	}
	if err != nil {
		return nil, fmt.Errorf("start replicator: checkpoint: %w", err)
	}
	dbf, walf, err := db.c.cellFiles(db.path)
	if err != nil {
		return nil, fmt.Errorf("start replicator: %w", err)
	}
	removeStaleUploads(filepath.Dir(db.path))
	ctx, cancel := context.WithCancel(context.Background())
	r := &Replicator{
		db:       db,
		cfg:      cfg,
		log:      cfg.Logger.With("cell", cfg.Cell, "epoch", cfg.Epoch),
		dbf:      dbf,
		wal:      newWALFollower(db.path+"-wal", uint32(ps), walf),
		state:    newDBState(uint32(ps)),
		walIndex: map[uint32]pageRef{},
		durable:  cfg.From.TXID,
		changed:  make(chan struct{}),
		kick:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
	}
	if restored != nil && restored.pageSize == uint32(ps) && sameHeader(dbf, restored) {
		r.state = *restored
		r.state.sums = slices.Clone(restored.sums)
	} else if err := r.state.load(dbf); err != nil {
		r.release()
		return nil, fmt.Errorf("start replicator: checksum %s: %w", db.path, err)
	}
	if want := ltx.Checksum(cfg.From.Checksum); cfg.From.TXID > 0 && want != 0 && r.state.checksum() != want {
		r.release()
		return nil, fmt.Errorf("start replicator: %s has checksum %s, but TXID %d was restored with %s",
			db.path, r.state.checksum(), cfg.From.TXID, want)
	}
	// SQLite checkpoints when the last connection closes; a DB closed
	// before its replicator would change the database file under an
	// upload still reading it.
	if err := db.c.dbConfig(sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1); err != nil {
		r.release()
		return nil, fmt.Errorf("start replicator: %w", err)
	}
	r.chain, r.chainKnown = chainFrom(cfg.Cell, cfg.From)
	if r.chainKnown && len(r.chain) > 0 {
		r.chainSnap = r.chain[0].max
	}
	r.captured.Store(cfg.From.TXID)
	r.lv = make([]level, mergeLevels)
	r.afterSnapshot(cfg.From.TXID, r.state.checksum())
	if cfg.Fleet != nil {
		r.upKick = make(chan struct{}, 1)
		r.wg.Add(2)
		go r.runFleet()
		go r.runUploads()
	} else {
		r.wg.Add(1)
		go r.run()
	}
	db.afterCommit = r.afterCommit
	db.beforeCall = r.maybeCheckpoint
	db.beforeClose = r.ownFiles
	db.beforePark, db.afterUnpark = r.beforePark, r.afterUnpark
	return r, nil
}

// sameHeader reports that the database file still has the size and the
// first page a restore in this process left (st). With an empty WAL (no
// commit since), only opening the file can have changed it, and that
// rewrites the header (journal mode) at most. It spares reading the whole
// file again to checksum every page.
func sameHeader(f cellFile, st *dbState) bool {
	size, err := f.Size()
	ps := int64(st.pageSize)
	if err != nil || st.pages() == 0 || size != int64(st.pages())*ps {
		return false
	}
	page := make([]byte, ps)
	if _, err := f.ReadAt(page, 0); err != nil {
		return false
	}
	return ltx.ChecksumPage(1, page) == st.sums[0]
}

// ownFiles runs when the database closes before the replicator: uploads
// still to come read the files through descriptors of their own. A file
// that cannot be opened fails replication (nothing captured can be
// encoded any more).
func (r *Replicator) ownFiles() {
	r.filesMu.Lock()
	defer r.filesMu.Unlock()
	dbf, err := os.Open(r.db.path)
	if err != nil {
		r.fail(fmt.Errorf("reopen database file: %w", err))
		return
	}
	walf, err := os.Open(r.wal.path)
	if err != nil {
		dbf.Close()
		r.fail(fmt.Errorf("reopen wal: %w", err))
		return
	}
	r.dbf.Close()
	r.wal.close()
	r.dbf, r.wal.f = osFile{dbf}, osFile{walf}
}

// beforePark agrees to a park of the database when everything captured
// is in the bucket and nothing reads the files, and checkpoints the WAL
// into the database file first, so the reopened connection starts on an
// empty WAL (without an fsync: the file is a copy of the bucket, and a
// power loss makes the node restore from there). Uploads start only on
// the cell's goroutine, so none can begin before the connection closes.
func (r *Replicator) beforePark() bool {
	if r.closing {
		return false
	}
	r.mu.Lock()
	idle := len(r.pending) == 0 && !r.uploading && !r.upBusy && len(r.upq) == 0 && r.snap == nil && r.merging == 0 &&
		r.durable == r.captured.Load() && r.err == nil
	r.mu.Unlock()
	if !idle {
		return false
	}
	if err := r.db.c.exec("PRAGMA synchronous=OFF"); err != nil {
		return false
	}
	done, err := r.db.c.checkpointTruncate()
	if err != nil || !done {
		r.db.c.exec("PRAGMA synchronous=NORMAL")
		return false
	}
	r.wal.restartOK = true
	clear(r.walIndex)
	r.walFrames = 0
	r.filesMu.Lock()
	r.dbf, r.wal.f = closedFile{}, closedFile{}
	r.filesMu.Unlock()
	return true
}

// afterUnpark takes the reopened connection's descriptors, after checking
// that the file is still the one the replicator's checksums describe.
func (r *Replicator) afterUnpark() error {
	if err := r.db.c.dbConfig(sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1); err != nil {
		return err
	}
	dbf, walf, err := r.db.c.cellFiles(r.db.path)
	if err != nil {
		return err
	}
	if !sameHeader(dbf, &r.state) {
		dbf.Close()
		walf.Close()
		err := fmt.Errorf("the database file %s changed while it was closed", r.db.path)
		r.fail(err)
		return err
	}
	r.filesMu.Lock()
	r.dbf, r.wal.f = dbf, walf
	r.filesMu.Unlock()
	// The park emptied the WAL: whatever the reopened connection writes
	// first starts it anew, from its header.
	r.wal.known = false
	return nil
}

func (r *Replicator) release() {
	r.cancel()
	r.wal.close()
	r.dbf.Close()
}

// Captured is the TXID of the last captured transaction.
func (r *Replicator) Captured() uint64 { return r.captured.Load() }

// Durable is the last TXID whose LTX (or a snapshot covering it) is in the
// bucket.
func (r *Replicator) Durable() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.durable
}

// Err is the error that stopped replication, if any. After it, commits are
// still made locally but never become durable; the cell must be stopped and
// restored from the bucket.
func (r *Replicator) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Stats returns the replicator's counters.
func (r *Replicator) Stats() ReplicatorStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Captured, s.Durable = r.captured.Load(), r.durable
	return s
}

// WaitDurable returns when transaction txid is durable, when replication
// has failed (its error, whatever txid: a commit that failed capture has no
// TXID), when the replicator closed before txid became durable
// (ErrReplicatorClosed), or when ctx ends.
func (r *Replicator) WaitDurable(ctx context.Context, txid uint64) error {
	for {
		r.mu.Lock()
		durable, err, closed, changed := r.durable, r.err, r.closed, r.changed
		r.mu.Unlock()
		switch {
		case err != nil:
			// Once a commit could not be captured, nothing the cell shows
			// may be released: that commit has no TXID to wait for.
			return err
		case durable >= txid:
			return nil
		case closed:
			return fmt.Errorf("wait for TXID %d: %w", txid, ErrReplicatorClosed)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("wait for TXID %d (durable %d): %w", txid, durable, context.Cause(ctx))
		}
	}
}

// Checkpoint copies the WAL into the database file and truncates it, but
// only when everything captured is durable and no upload or snapshot is
// reading the WAL; otherwise it does nothing and reports false. Call it on
// the cell's goroutine when the cell is idle enough (for example after a
// WaitDurable), outside a transaction.
func (r *Replicator) Checkpoint() (bool, error) {
	if r.closing {
		return false, ErrReplicatorClosed
	}
	if err := r.db.checkOpen(); err != nil {
		return false, err
	}
	if !r.db.c.autocommit() {
		return false, nil
	}
	r.mu.Lock()
	idle := len(r.pending) == 0 && !r.uploading && !r.upBusy && len(r.upq) == 0 && r.snap == nil && r.merging == 0 && r.durable == r.captured.Load()
	err := r.err
	r.mu.Unlock()
	if err != nil || !idle {
		return false, err
	}
	// Nothing else can start reading the WAL now: batches and snapshots
	// begin only on this goroutine.
	done, err := r.db.c.checkpointTruncate()
	if err != nil || !done {
		return false, err
	}
	// The database file now holds every page; the next commit starts a new
	// WAL (new salts) at its first frame.
	r.wal.restartOK = true
	clear(r.walIndex)
	return true, nil
}

// checkpointTruncate runs a TRUNCATE checkpoint and reports whether it
// completed (every frame copied, the WAL emptied).
func (c *conn) checkpointTruncate() (bool, error) {
	stmt, err := c.prepareString("PRAGMA wal_checkpoint(TRUNCATE)")
	if err != nil {
		return false, err
	}
	defer c.finalize(stmt)
	row, err := c.step(stmt)
	if err != nil || !row {
		return false, err
	}
	return c.columnInt64(stmt, 0) == 0, nil
}

// Snapshot writes a full snapshot of the database as of the last commit
// into the current epoch and waits until it is in the bucket. If the newest
// snapshot already is at the last commit, it waits for that to be durable.
func (r *Replicator) Snapshot(ctx context.Context) error {
	if r.closing {
		return ErrReplicatorClosed
	}
	if err := r.waitSnapshot(ctx, r.inFlightSnapshot()); err != nil {
		return err
	}
	s := r.startSnapshot()
	if s == nil {
		return r.WaitDurable(ctx, r.Captured())
	}
	if err := r.waitSnapshot(ctx, s); err != nil {
		return err
	}
	return s.err
}

func (r *Replicator) inFlightSnapshot() *batch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap
}

// waitSnapshot waits until s (nil: none) is finished.
func (r *Replicator) waitSnapshot(ctx context.Context, s *batch) error {
	if s == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("snapshot: %w", context.Cause(ctx))
	}
}

// Close stops capturing, waits (within ctx) until everything captured is
// durable, and stops the uploader. Compaction finishes first: a snapshot
// in flight is awaited, and one is written if one is due (or the database
// is at most CloseSnapshotBytes and SnapshotSegments segments followed the
// last), so the next restore reads few objects (a snapshot that does not finish within ctx is
// abandoned; it was not needed for durability). Close the replicator
// before the DB. It returns the error that stopped replication, or ctx's
// if it ended before everything was durable; closing twice is harmless.
func (r *Replicator) Close(ctx context.Context) error {
	if r.closing {
		return nil
	}
	r.closing = true
	r.db.afterCommit = nil
	r.db.beforeCall = nil
	r.db.beforeClose = nil
	r.db.beforePark, r.db.afterUnpark = nil, nil
	if r.db.parked && r.closeSnapshotDue() {
		// The snapshot reads the file: open it again (a failure leaves
		// the snapshot out; it is not needed for durability).
		r.db.ready()
		if r.db.c != nil {
			r.afterUnpark()
		}
	}
	if r.db.c != nil {
		defer r.db.c.dbConfig(sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0)
	}
	if r.cfg.Fleet != nil {
		r.mu.Lock()
		r.flushing = true
		r.mu.Unlock()
		select {
		case r.upKick <- struct{}{}:
		default:
		}
	}
	err := r.WaitDurable(ctx, r.Captured())
	if err == nil && r.waitSnapshot(ctx, r.inFlightSnapshot()) == nil && r.closeSnapshotDue() {
		r.waitSnapshot(ctx, r.startSnapshot())
	}
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	r.closed = true
	r.notify()
	r.mu.Unlock()
	r.wal.close()
	r.dbf.Close()
	if err != nil {
		return fmt.Errorf("close replicator: %w", err)
	}
	return nil
}

// snapshotDue reports that enough was captured since the newest snapshot
// to write another: SnapshotSegments segments, and then for a database
// larger than InlineSnapshotBytes, pages as many as the database holds or
// a full top merge level (compact.go).
func (r *Replicator) snapshotDue() bool {
	if r.segs < r.cfg.SnapshotSegments {
		return false
	}
	if r.cfg.MergeSegments < 0 || r.inlineFits() {
		return true
	}
	size := r.dbBytes()
	return r.segBytes >= size || r.levelsFull() && maxTopAmplification*r.segBytes >= size
}

// CloseSnapshotBytes is the largest database that gets a snapshot when
// its replicator closes with SnapshotSegments segments or more after the
// newest one, due or not: the next activation then reads one object, not
// a chain of merged ones, for an upload of at most this much.
const CloseSnapshotBytes = 16 << 20

// closeSnapshotDue reports that Close should write a snapshot.
func (r *Replicator) closeSnapshotDue() bool {
	if r.snapshotDue() {
		return true
	}
	return r.segs >= r.cfg.SnapshotSegments && r.dbBytes() <= CloseSnapshotBytes
}

// CheckpointFrames is the WAL size (in frames) past which a storage call
// checkpoints, once every captured commit is durable. The node alone
// checkpoints, and only after capture: without it the WAL of a loaded cell
// would grow without bound.
const CheckpointFrames = 1000

// maybeCheckpoint runs before storage calls (on the cell's goroutine).
func (r *Replicator) maybeCheckpoint() {
	if r.walFrames < CheckpointFrames || r.closing {
		return
	}
	if done, err := r.Checkpoint(); err == nil && done {
		r.walFrames = 0
	}
}

// afterCommit is the WAL hook: capture what was just committed.
func (r *Replicator) afterCommit(walFrames int64) {
	r.walFrames = walFrames
	if r.Err() != nil {
		return
	}
	if err := r.wal.read(walFrames, r.captureTxn); err != nil {
		r.fail(fmt.Errorf("capture commit %d: %w", r.captured.Load()+1, err))
		return
	}
	switch {
	case r.inlineFits():
		// Snapshots go out in place of segments (captureTxn).
	case r.snapshotDue() && r.startSnapshot() != nil:
	default:
		// No snapshot due, or one still uploading: merging keeps the
		// chain short meanwhile (a large snapshot can take many commits).
		r.maybeMerge()
	}
}

// inlineFits reports that the database is small enough for its next
// snapshot to go out in place of a segment (see captureTxn).
func (r *Replicator) inlineFits() bool {
	return r.dbBytes() <= InlineSnapshotBytes
}

// dbBytes is the database's size as of the last capture.
func (r *Replicator) dbBytes() int64 {
	return int64(r.state.pages()) * int64(r.state.pageSize)
}

// captureTxn takes one committed transaction into the open batch.
func (r *Replicator) captureTxn(frames []walFrame, commit uint32) {
	pre := r.state.checksum()
	for _, f := range frames {
		r.state.set(f.pgno, f.ref.sum)
		r.walIndex[f.pgno] = f.ref
	}
	r.state.resize(commit)
	txid := r.captured.Load() + 1
	r.segBytes += int64(len(frames)) * int64(r.state.pageSize)
	r.touch(frames)

	r.mu.Lock()
	b := r.open
	if b == nil {
		// The lineage's first LTX (TXID 1) must be a snapshot: LTX calls
		// every file with minTXID 1 one, and the file may hold pages that
		// were never in the WAL.
		b = &batch{min: txid, pre: pre, full: txid == 1, pages: map[uint32]pageRef{}}
		if txid > 1 && r.snapshotDue() && r.inlineFits() {
			// A small database's snapshot goes out in place of the next
			// segment, one upload instead of two racing for the store.
			b.min, b.full, b.inline, b.pages = 1, true, true, maps.Clone(r.walIndex)
			r.segs, r.segBytes = 0, 0
		}
		r.pending = append(r.pending, b)
		r.open = b
		r.segs++
		r.lv[0].runs++
	}
	b.max, b.post, b.commit = txid, r.state.checksum(), commit
	for _, f := range frames {
		b.pages[f.pgno] = f.ref
	}
	if b.full {
		// A snapshot covers exactly up to here: later commits start the
		// next segment, and the merge levels start after it.
		r.open = nil
		r.lastSnap = max(r.lastSnap, txid)
		r.afterSnapshot(txid, b.post)
	}
	r.mu.Unlock()
	r.captured.Store(txid)
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

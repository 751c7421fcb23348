package d1

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/celldgo/celld/cell"
)

// Bookmarks. On Cloudflare a bookmark names a point in a database's
// history so that a session on a read replica sees at least what it saw
// before. Here every session reads the primary, so any bookmark is
// satisfied; it still has to look like one and grow as the database
// changes, because applications store and compare them.
//
// A bookmark is "<open time>-<commits>" in fixed-width hex: the time (unix
// ms) this process opened the cell's database, then the write transactions
// committed since. Both only grow while the cell stays here; a later
// activation starts from a later time (clocks permitting), so bookmarks
// also sort across activations.

var opened = struct {
	sync.Mutex
	at map[weak.Pointer[cell.DB]]int64
}{at: map[weak.Pointer[cell.DB]]int64{}}

func bookmark(db *cell.DB) string {
	k := weak.Make(db)
	opened.Lock()
	at, ok := opened.at[k]
	if !ok {
		at = time.Now().UnixMilli()
		opened.at[k] = at
		runtime.AddCleanup(db, func(k weak.Pointer[cell.DB]) {
			opened.Lock()
			delete(opened.at, k)
			opened.Unlock()
		}, k)
	}
	opened.Unlock()
	return fmt.Sprintf("%012x-%016x", at, db.Commits())
}

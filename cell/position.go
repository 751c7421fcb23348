package cell

// Position is where the replicated history stands: the epoch, the last
// transaction in the bucket and the database checksum at it. ok is false
// unless every captured commit is durable and nothing failed; then, after
// Close, it describes the local file exactly, so a later replicator of the
// same epoch can continue the chain from it (ReplicatorConfig.From) without
// a restore. Call it on the cell's goroutine, like Close.
func (r *Replicator) Position() (pos RestoreInfo, ok bool) {
	r.mu.Lock()
	durable, failed := r.durable, r.err != nil
	r.mu.Unlock()
	if failed || durable != r.captured.Load() {
		return RestoreInfo{}, false
	}
	if durable == 0 {
		return RestoreInfo{Epoch: r.cfg.Epoch}, true
	}
	return RestoreInfo{Epoch: r.cfg.Epoch, TXID: durable, Checksum: uint64(r.state.checksum())}, true
}

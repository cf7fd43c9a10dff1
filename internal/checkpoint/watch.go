package checkpoint

// event is a change the kernel reported in a watched directory.
type event struct {
	wd   int32
	name string
	// gone says the watch ended (the directory was removed); self that
	// the directory itself moved, went or changed; dir that name is a
	// directory.
	gone, self, dir bool
}

// watcher tracks changes in the directories of the workspace between
// scans, so that a scan only lists the directories that changed. It is
// used from the scanner under the service's lock, except add, which the
// listing workers call concurrently.
type watcher interface {
	// add watches the open directory dirfd (at abs) for node n.
	add(dirfd int, abs string, n *dirNode) error
	// forget stops watching n's directory unless the watch now belongs to
	// another node (the same directory seen at a new path).
	forget(n *dirNode)
	// node returns the node a watch descriptor belongs to.
	node(wd int32) *dirNode
	// drain returns the events reported since the last drain; overflow
	// says some were lost, so only a full scan is right.
	drain() (evs []event, overflow bool)
	close()
}

package transfer

// SetGroupTurns sets how many rows a group of threads holds at most
// until the test ends, so that a small fixture takes the long-thread path.
func SetGroupTurns(t interface{ Cleanup(func()) }, n uint64) {
	old := groupTurns
	groupTurns = n
	t.Cleanup(func() { groupTurns = old })
}

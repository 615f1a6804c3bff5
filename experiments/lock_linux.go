package experiments

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"outcore/internal/osutil"
)

// queueLock is an exclusive advisory lock on <datadir>/queue.lock: the
// process holding it is the one that runs the data directory's queue.
type queueLock struct{ f *os.File }

// lockQueue takes the queue lock without waiting; the error wraps
// ErrQueueBusy when another process holds it.
func lockQueue(dataDir string) (*queueLock, error) {
	p := filepath.Join(dataDir, "queue.lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	if err := osutil.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, osutil.ErrLocked) {
			holder := ""
			if b, err := os.ReadFile(p); err == nil {
				if pid := strings.TrimSpace(string(b)); pid != "" {
					holder = " by process " + pid
				}
			}
			return nil, fmt.Errorf("%w (%s is locked%s)", ErrQueueBusy, p, holder)
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return &queueLock{f: f}, nil
}

func (l *queueLock) unlock() {
	osutil.Unlock(l.f)
	l.f.Close()
}

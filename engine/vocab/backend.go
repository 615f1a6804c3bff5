package vocab

import (
	"errors"
	"fmt"
)

// ErrInvalid marks a malformed argument (engine/storage's ErrInvalid is
// this sentinel: a bad backend name, a bad option, a short destination).
var ErrInvalid = errors.New("invalid argument")

// Backend names an I/O backend of engine/storage (Config.IO).
type Backend string

// The backends. BackendAuto (the empty string) lets storage choose: uring
// when io_uring is available, else pread.
const (
	BackendAuto  Backend = ""
	BackendUring Backend = "uring"
	BackendPread Backend = "pread"
	BackendMmap  Backend = "mmap"
)

// ParseBackend turns a command-line word into a Backend; "" and "auto" mean
// BackendAuto.
func ParseBackend(s string) (Backend, error) {
	switch s {
	case "", "auto":
		return BackendAuto, nil
	case string(BackendUring), string(BackendPread), string(BackendMmap):
		return Backend(s), nil
	}
	return "", fmt.Errorf("%w: unknown I/O backend %q (want uring, pread, mmap or auto)", ErrInvalid, s)
}

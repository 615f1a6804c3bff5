//go:build unix

package web

import "syscall"

// RaiseFDLimit raises the soft limit of open files to the hard limit (a
// server holds one descriptor per connection) and returns the limit in
// force afterwards.
func RaiseFDLimit() (int64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	if r.Cur < r.Max {
		want := r
		want.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return int64(r.Cur), err
		}
		r = want
	}
	return int64(r.Cur), nil
}

// FDLimit is the soft limit of open files (0 when unknown).
func FDLimit() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int64(r.Cur)
}

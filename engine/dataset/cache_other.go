//go:build !linux

package dataset

import "os"

// dropCache is a no-op where posix_fadvise is not available.
func dropCache(f *os.File) {}

package dataset

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropCache asks the kernel to drop f's clean pages from the page cache
// (posix_fadvise DONTNEED). Errors are ignored: it is only a hint.
func dropCache(f *os.File) {
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

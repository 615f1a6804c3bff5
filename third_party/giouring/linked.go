// MIT License, Copyright (c) 2023 Paweł Gaczyński (see LICENSE).
//
// outcore patch: the upstream file reached syscall.mmap and syscall.munmap
// through go:linkname, which Go >= 1.23 refuses to link without
// -checklinkname=0. These wrappers make the same system calls directly.

package giouring

import "syscall"

func mmap(addr uintptr, length uintptr, prot int, flags int, fd int, offset int64) (uintptr, error) {
	r, _, errno := syscall.Syscall6(syscall.SYS_MMAP, addr, length, uintptr(prot), uintptr(flags), uintptr(fd), uintptr(offset))
	if errno != 0 {
		return 0, errno
	}
	return r, nil
}

func munmap(addr uintptr, length uintptr) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MUNMAP, addr, length, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

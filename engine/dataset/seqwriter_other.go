//go:build !linux

package dataset

import "os"

func startWriteback(f *os.File, off, n int64)      {}
func waitWriteback(f *os.File, off, n int64) error { return nil }
func dropRange(f *os.File, off, n int64)           {}

//go:build !unix

package web

// RaiseFDLimit does nothing where there are no rlimits.
func RaiseFDLimit() (int64, error) { return 0, nil }

// FDLimit is 0 (unknown) where there are no rlimits.
func FDLimit() int64 { return 0 }

//go:build !linux

package dataset

func cpuSeconds() float64 { return 0 }

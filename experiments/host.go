package experiments

import (
	"outcore/engine/metrics"
	"outcore/internal/version"
)

// hostFacts describes this machine for run records (the collector of
// internal/osutil through metrics.CollectHost). dir is a path on the disk
// the data lives on (for its model).
func hostFacts(dir, gpuName string) metrics.HostFacts {
	h := metrics.CollectHost(dir)
	h.Version = Version()
	h.GPU = gpuName
	return h
}

// Version is this build's outcore version (see package version).
func Version() string { return version.String() }

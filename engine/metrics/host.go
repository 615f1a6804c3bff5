package metrics

import "outcore/internal/osutil"

// CollectHost returns the host facts of this machine (internal/osutil's
// collector; dir is a path on the data's disk, for its model) with GPU
// "none". The caller sets GPU, GEMM and Version.
func CollectHost(dir string) HostFacts {
	h := osutil.CollectHost(dir)
	return HostFacts{Hostname: h.Hostname, Kernel: h.Kernel, Cores: h.Cores, MemBytes: h.MemBytes,
		DiskModel: h.DiskModel, GoVersion: h.GoVersion, GPU: "none", Storage: h.Storage, Reclaim: h.Reclaim}
}

package osutil

// Host is what this machine is, for run records: the facts the operating
// system can tell (GPU, matrix library and outcore's version are added by
// the caller).
type Host struct {
	Hostname  string
	Kernel    string // kernel release ("6.1.0-18-amd64")
	Cores     int
	MemBytes  int64
	DiskModel string // of the disk holding the directory asked about
	GoVersion string
	Storage   string // FileSystemID of the directory asked about
	// Reclaim is the proactive reclaim running beside the memory limits
	// (ProactiveReclaim), "" when none.
	Reclaim string
}

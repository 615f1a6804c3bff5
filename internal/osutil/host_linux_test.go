package osutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestCollectHost(t *testing.T) {
	h := CollectHost(t.TempDir())
	if h.Cores != runtime.NumCPU() || h.GoVersion != runtime.Version() || h.Kernel == "" || h.MemBytes <= 0 || h.Hostname == "" {
		t.Fatalf("host %+v", h)
	}
	t.Logf("host %+v", h)
	if CollectHost("").DiskModel != "" {
		t.Fatal("disk model without a directory")
	}
	if DiskModel(filepath.Join(t.TempDir(), "missing")) != "" {
		t.Fatal("disk model of a missing path")
	}
}

// TestDiskModelAt names devices from fixture sysfs trees built here.
func TestDiskModelAt(t *testing.T) {
	root := t.TempDir()
	mk := func(p, content string) {
		t.Helper()
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("nvme0n1/device/model", "Samsung SSD 980 PRO 1TB   \n")
	mk("nvme0n1/nvme0n1p2/partition", "2\n")
	mk("dm-0/slaves/sda3/x", "")
	mk("vda/device/x", "")
	os.MkdirAll(filepath.Join(root, "drivers/virtio_blk"), 0o755)
	os.Symlink(filepath.Join(root, "drivers/virtio_blk"), filepath.Join(root, "vda/device/driver"))
	mk("vdb/device/model", "  \n")
	mk("loop0/x", "")
	for _, tc := range []struct{ dir, want string }{
		{"nvme0n1", "Samsung SSD 980 PRO 1TB"},
		{"nvme0n1/nvme0n1p2", "Samsung SSD 980 PRO 1TB"}, // a partition names its disk
		{"dm-0", "dm-0 on sda3"},
		{"vda", "vda (virtio_blk)"},
		{"vdb", "vdb"}, // blank model, no driver
		{"loop0", "loop0"},
	} {
		if got := diskModelAt(filepath.Join(root, tc.dir)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.dir, got, tc.want)
		}
	}
}

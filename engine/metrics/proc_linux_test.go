package metrics

import (
	"path/filepath"
	"testing"
)

func TestMemoryCgroupFile(t *testing.T) {
	root, _ := filepath.Abs("testdata/cgroup")
	tests := []struct {
		name, proc, want string
	}{
		{"v1", "4:memory:/run/x\n0::/\n", filepath.Join(root, "memory/run/x/memory.usage_in_bytes")},
		{"v1 joined controllers", "3:cpu,memory:/run/x\n", filepath.Join(root, "memory/run/x/memory.usage_in_bytes")},
		{"v2", "0::/app\n", filepath.Join(root, "app/memory.current")},
		{"root is not a limit", "4:memory:/\n0::/\n", ""},
		{"missing dir", "0::/nope\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := memoryCgroupFile(tc.proc, root)
			if tc.want == "" {
				if err != ErrNoCgroup {
					t.Fatalf("got %q, %v; want ErrNoCgroup", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

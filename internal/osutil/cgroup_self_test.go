package osutil

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSelfCgroupUsageFile(t *testing.T) {
	root, _ := filepath.Abs("testdata/cgroup-self")
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
			own, err := ParseProcCgroups(strings.NewReader(tc.proc))
			if err != nil {
				t.Fatal(err)
			}
			got, err := selfCgroupUsageFile(own, root)
			if tc.want == "" {
				if err != ErrNoSelfCgroup {
					t.Fatalf("got %q, %v; want ErrNoSelfCgroup", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

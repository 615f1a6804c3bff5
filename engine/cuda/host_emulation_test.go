//go:build cgo

package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostEmulation runs the GPU tests that compare with engine/nn
// (TestModelMatchesCPU, TestSAGEBadInput, TestStagedCopy) on a machine without a GPU,
// against testdata/hostcuda: a stand-in libcuda.so.1 and libcublas.so.13,
// built here with the system C++ compiler, whose cuLaunchKernel runs
// kernels.cu itself on the host. It checks the cgo glue, the argument
// packing and the kernels' arithmetic (not concurrency: on the host the
// atomics are plain adds); a GPU run is still the test of the real thing.
// The kernels are compiled by the real NVRTC first, so it needs NVRTC.
func TestHostEmulation(t *testing.T) {
	if os.Getenv("OUTCORE_CUDA_HOST") != "" {
		t.Skip("inside the emulated run")
	}
	if _, err := Open(); err == nil {
		t.Skip("a GPU is present: the GPU tests ran on it")
	}
	if _, _, err := CheckKernels([2]int{9, 0}); err != nil {
		t.Skipf("NVRTC is needed (the kernels are compiled before the emulated load): %v", err)
	}
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++ to build the host stand-in")
	}
	dir := t.TempDir()
	build := exec.Command(cxx, "-O1", "-shared", "-fPIC", "-o", filepath.Join(dir, "libcuda.so.1"), "testdata/hostcuda/hostcuda.cpp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the host stand-in: %v\n%s", err, out)
	}
	if err := os.Symlink("libcuda.so.1", filepath.Join(dir, "libcublas.so.13")); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(os.Args[0], "-test.run", "^(TestModelMatchesCPU|TestSAGEBadInput|TestStagedCopy)$", "-test.count=1", "-test.v")
	run.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir+":"+os.Getenv("LD_LIBRARY_PATH"), "OUTCORE_CUDA_HOST=1")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("emulated run: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"GPU host emulation", "--- PASS: TestModelMatchesCPU", "--- PASS: TestModelMatchesCPU/gat", "--- PASS: TestSAGEBadInput", "--- PASS: TestStagedCopy"} {
		if !strings.Contains(s, want) {
			t.Fatalf("emulated run lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "--- SKIP") {
		t.Fatalf("emulated run skipped a test:\n%s", s)
	}
	t.Logf("emulated run:\n%s", s)
}

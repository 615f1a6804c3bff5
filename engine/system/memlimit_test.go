package system

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/gnndrive"
	"outcore/engine/system/pygplus"
	"outcore/engine/system/systest"
	"outcore/engine/train"
	"outcore/internal/cgroup"
)

func TestMain(m *testing.M) {
	if isMemLimitChild() {
		os.Exit(memLimitChild())
	}
	systest.Main(m)
}

// RunUnderMemLimit re-executes os.Executable() — here the test binary — as
// `<binary> train <args>` inside the group. The test binary plays the
// training process: with "hog" it allocates until the limit kills it; with
// "run" it runs a real training from the config in OUTCORE_TEST_CONFIG.

func isMemLimitChild() bool {
	return len(os.Args) >= 3 && os.Args[1] == "train" && os.Getenv(EnvCgroup) != ""
}

func memLimitChild() int {
	switch os.Args[2] {
	case "hog":
		var keep [][]byte
		for i := 0; i < 64; i++ {
			b := make([]byte, 16<<20)
			for j := range b {
				b[j] = byte(j)
			}
			keep = append(keep, b)
		}
		fmt.Println(`{"type":"log","level":"info","msg":"hog survived"}`)
		return 0
	case "run":
		var cfg train.Config
		if err := json.Unmarshal([]byte(os.Getenv("OUTCORE_TEST_CONFIG")), &cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if _, err := train.Run(context.Background(), cfg, os.Stdout, &train.RunOptions{MemoryLimit: OwnGroupLimit}); err != nil {
			return 1
		}
		return 0
	}
	return 2
}

func needCgroups(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil {
		t.Skipf("memory cgroups unavailable here: %v", err)
	}
}

func lastSummary(t *testing.T, out []byte) (metrics.SummaryRecord, []string) {
	t.Helper()
	var sum metrics.SummaryRecord
	var types []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		types = append(types, head.Type)
		if head.Type == metrics.TypeSummary {
			json.Unmarshal(sc.Bytes(), &sum)
		}
	}
	return sum, types
}

func TestRunUnderMemLimitOOM(t *testing.T) {
	needCgroups(t)
	cfg := train.Config{Dataset: "x", MemLimit: "64MiB"}
	var out, errb bytes.Buffer
	handled, err := RunUnderMemLimit(context.Background(), cfg, []string{"hog"}, &out, &errb)
	if !handled {
		t.Fatal("not handled")
	}
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v (stderr %s, stdout %s)", err, errb.String(), out.String())
	}
	sum, types := lastSummary(t, out.Bytes())
	if sum.Outcome != metrics.OutcomeOOM || types[len(types)-1] != metrics.TypeSummary {
		t.Fatalf("summary %+v, records %v", sum, types)
	}
	if sum.PeakCgroupBytes <= 0 || sum.PeakCgroupBytes > 65<<20 { // the kernel may overshoot by a few pages
		t.Fatalf("peak cgroup bytes %d with a 64 MiB limit", sum.PeakCgroupBytes)
	}
}

func TestRunUnderMemLimitRun(t *testing.T) {
	needCgroups(t)
	cfg := systest.Config(t, pygplus.Name, nil)
	out := runUnderLimit(t, cfg, "400MiB")
	sum, types := lastSummary(t, out)
	if sum.Outcome != metrics.OutcomeDone || types[0] != metrics.TypeStart {
		t.Fatalf("summary %+v, records %v", sum, types)
	}
	var start metrics.StartRecord
	json.Unmarshal(bytes.SplitN(out, []byte{'\n'}, 2)[0], &start)
	if !start.LimitEnforced || start.MemLimitBytes != 400<<20 {
		t.Fatalf("start record: limit_enforced=%v mem_limit_bytes=%d", start.LimitEnforced, start.MemLimitBytes)
	}
	if sum.PeakCgroupBytes <= 0 || sum.PeakCgroupBytes > 401<<20 {
		t.Fatalf("peak cgroup bytes %d", sum.PeakCgroupBytes)
	}
	// The model step is held outside the budget by default, and the
	// summary's deviations say so with the cgroup limit it set.
	if !systest.HasDeviation(sum.Deviations, "held outside the 400 MiB memory budget") {
		t.Fatalf("summary deviations %q lack the model step held outside the budget", sum.Deviations)
	}
}

// runUnderLimit trains cfg for one epoch in a child placed in a memory
// cgroup of limit and returns its records.
func runUnderLimit(t *testing.T, cfg train.Config, limit string) []byte {
	t.Helper()
	cfg.Epochs = 1
	cfg.MemLimit = limit
	b, _ := json.Marshal(cfg)
	t.Setenv("OUTCORE_TEST_CONFIG", string(b))
	var out, errb bytes.Buffer
	handled, err := RunUnderMemLimit(context.Background(), cfg, []string{"run"}, &out, &errb)
	if !handled || err != nil {
		t.Fatalf("handled=%v err=%v stderr=%s", handled, err, errb.String())
	}
	return out.Bytes()
}

// TestModelMemHost: with model_mem "host" the step is charged to the budget:
// no deviation, and the cgroup limit stays the budget.
func TestModelMemHost(t *testing.T) {
	needCgroups(t)
	cfg := systest.Config(t, pygplus.Name, nil)
	cfg.ModelMem = train.ModelMemHost
	sum, _ := lastSummary(t, runUnderLimit(t, cfg, "300MiB"))
	if sum.Outcome != metrics.OutcomeDone || systest.HasDeviation(sum.Deviations, "held outside") {
		t.Fatalf("summary %+v", sum)
	}
}

func TestRunUnderMemLimitNotNeeded(t *testing.T) {
	var out, errb bytes.Buffer
	if handled, err := RunUnderMemLimit(context.Background(), train.Config{Dataset: "x"}, nil, &out, &errb); handled || err != nil {
		t.Fatalf("no limit: handled=%v err=%v", handled, err)
	}
	t.Setenv(EnvCgroup, "/somewhere")
	if handled, err := RunUnderMemLimit(context.Background(), train.Config{Dataset: "x", MemLimit: "1GiB"}, nil, &out, &errb); handled || err != nil {
		t.Fatalf("already placed: handled=%v err=%v", handled, err)
	}
	os.Unsetenv(EnvCgroup)
	if _, err := ResolveMemLimitBytes(train.Config{Dataset: "nope", DataDir: t.TempDir(), MemLimit: "25%"}); err == nil {
		t.Fatal("percentage of a missing dataset accepted")
	}
	if b, err := ResolveMemLimitBytes(train.Config{MemLimit: "2GiB"}); err != nil || b != 2<<30 {
		t.Fatalf("2GiB = %d, %v", b, err)
	}
}

// TestGNNDriveDeviceBuffer: with feature_buffer=device under a limit, the
// buffer is held outside the budget (the deviation names it and the cgroup
// limit) and the run trains.
func TestGNNDriveDeviceBuffer(t *testing.T) {
	needCgroups(t)
	cfg := systest.Config(t, gnndrive.Name, map[string]string{"feature_buffer": "device", "samplers": "1", "extractors": "2"})
	sum, _ := lastSummary(t, runUnderLimit(t, cfg, "300MiB"))
	if sum.Outcome != metrics.OutcomeDone || !systest.HasDeviation(sum.Deviations, "feature_buffer=device") || !systest.HasDeviation(sum.Deviations, "GPU-based layout") {
		t.Fatalf("summary %+v", sum)
	}
}

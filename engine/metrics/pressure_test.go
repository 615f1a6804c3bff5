package metrics

import (
	"math"
	"os"
	"testing"
	"time"
)

func TestParseCPUStat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CPUStat
		ok   bool
	}{
		{"cpu  100 5 50 800 40 1 2 30 0 0\ncpu0 1 2 3 4\n", CPUStat{Total: 1028, Idle: 840, Steal: 30}, true},
		{"cpu 1 2 3 4\n", CPUStat{Total: 10, Idle: 4}, true}, // old kernels: no iowait, no steal
		{"cpu0 1 2 3 4 5\n", CPUStat{}, false},
		{"cpu 1 x 3 4 5\n", CPUStat{}, false},
		{"cpu 1 -2 3 4 5\n", CPUStat{}, false},
		{"", CPUStat{}, false},
	} {
		got, err := ParseCPUStat([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParsePSIAndLoad(t *testing.T) {
	psi := "some avg10=1.50 avg60=0.80 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"
	if v, err := ParsePSISomeTotal([]byte(psi)); err != nil || v != 123456 {
		t.Errorf("psi: %v %v", v, err)
	}
	for _, bad := range []string{"", "full total=3\n", "some avg10=1\n", "some total=-4\n", "some total=x\n"} {
		if _, err := ParsePSISomeTotal([]byte(bad)); err == nil {
			t.Errorf("psi %q: no error", bad)
		}
	}
	if v, err := ParseLoad1([]byte("2.50 1.00 0.50 3/200 999\n")); err != nil || v != 2.5 {
		t.Errorf("load: %v %v", v, err)
	}
	for _, bad := range []string{"", "x 1 2", "-1 0 0", "NaN 1 1"} {
		if _, err := ParseLoad1([]byte(bad)); err == nil {
			t.Errorf("load %q: no error", bad)
		}
	}
}

// pressureBetween: other processes' CPU is the host's busy share less this
// process's; missing PSI stays nil (unavailable), never 0.
func TestPressureBetween(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := pressureCounters{at: t0, ownCPU: 10, total: 1000, idle: 600, stel: 0, statOK: true,
		psi: [3]int64{0, 5e5, 0}, psiOK: [3]bool{true, true, false}}
	// 10 s on 2 cores = 2000 jiffies at 100 Hz: 1000 busy, 100 steal, 900 idle;
	// this process used 4 CPU seconds = 20 % of the cores.
	b := pressureCounters{at: t0.Add(10 * time.Second), ownCPU: 14, total: 3000, idle: 1500, stel: 100, statOK: true,
		psi: [3]int64{2e6, 15e5, 7}, psiOK: [3]bool{true, true, false}}
	p := pressureBetween(a, b, 3.25, 2)
	if math.Abs(p.OthersCPUPct-30) > 1e-9 || math.Abs(p.StealPct-5) > 1e-9 || p.Load1 != 3.25 {
		t.Errorf("pressure %+v: want others 30 %%, steal 5 %%, load 3.25", p)
	}
	if p.PSICPUPct == nil || math.Abs(*p.PSICPUPct-20) > 1e-9 || p.PSIIOPct == nil || math.Abs(*p.PSIIOPct-10) > 1e-9 {
		t.Errorf("psi %v %v: want 20 %% and 10 %%", p.PSICPUPct, p.PSIIOPct)
	}
	if p.PSIMemoryPct != nil {
		t.Errorf("memory PSI unavailable on one side: got %v, want nil", *p.PSIMemoryPct)
	}
	if r := BusyReasons(p); len(r) != 2 {
		t.Errorf("busy reasons %v: want others and steal", r)
	}
	if r := BusyReasons(HostPressure{OthersCPUPct: 19, StealPct: 4.9, Load1: 50}); r != nil {
		t.Errorf("quiet host flagged: %v", r)
	}
	// no /proc/stat: nothing judged
	q := pressureBetween(pressureCounters{at: t0}, pressureCounters{at: t0.Add(time.Second)}, 0, 2)
	if q.OthersCPUPct != 0 || q.PSICPUPct != nil {
		t.Errorf("without counters: %+v", q)
	}
}

// The meter reads the real /proc of this host.
func TestPressureMeterOnThisHost(t *testing.T) {
	m := NewPressureMeter()
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) { // some CPU of our own
	}
	p := m.Stop()
	for name, v := range map[string]float64{"others": p.OthersCPUPct, "steal": p.StealPct} {
		if v < 0 || v > 100 {
			t.Errorf("%s %v out of [0, 100]", name, v)
		}
	}
	if _, err := os.Stat("/proc/pressure/cpu"); err == nil {
		if p.PSICPUPct == nil {
			t.Error("/proc/pressure/cpu exists but the CPU PSI is unavailable")
		}
	} else if p.PSICPUPct != nil {
		t.Error("no /proc/pressure but a CPU PSI value")
	}
	if _, err := os.Stat("/proc/loadavg"); err == nil && p.Load1 <= 0 {
		t.Logf("load1 %v (an idle host reads 0)", p.Load1)
	}
}

func FuzzHostPressureParsers(f *testing.F) {
	f.Add([]byte("cpu  100 5 50 800 40 1 2 30 0 0\n"))
	f.Add([]byte("some avg10=1.50 avg60=0.80 avg300=0.10 total=123456\n"))
	f.Add([]byte("2.50 1.00 0.50 3/200 999\n"))
	f.Add([]byte("cpu 9223372036854775807 9223372036854775807 1 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := ParseCPUStat(b); err == nil && (st.Total < 0 || st.Idle > st.Total || st.Steal > st.Total) {
			t.Errorf("cpu stat %+v from %q", st, b)
		}
		if v, err := ParsePSISomeTotal(b); err == nil && v < 0 {
			t.Errorf("psi %v", v)
		}
		if v, err := ParseLoad1(b); err == nil && (v < 0 || math.IsNaN(v)) {
			t.Errorf("load %v", v)
		}
	})
}

package cli

import (
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/train"

	_ "outcore/engine/system/all" // every variant registered
)

// TestEveryVariantWithinItsAllowance is the memory contract's check under
// real memory cgroups (DESIGN §2 "One memory contract"): at one grid point
// every registered variant gets the same host budget and the same device
// budget, records them with its device tiers and model step, and its
// measured peaks stay within what it was allowed — the cgroup's peak within
// host budget + device tiers + model step, the device tiers within the
// device budget, or the overrun recorded as a deviation. On systest's small
// graph; TestEveryVariantWithinItsAllowanceOnMedium (make test-long) runs
// the same check on `medium` at 25 % and 50 %, as does
// scripts/check-allowance.sh from the command line.
func TestEveryVariantWithinItsAllowance(t *testing.T) {
	needCgroups(t)
	const host, device = 128 << 20, 4 << 20
	for _, v := range train.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			out, err := trainUnderLimit(t, append(baseArgs(t, v.Name), "--mem-limit", "128MiB", "--device-mem", "4MiB")...)
			if err != nil {
				t.Fatal(err)
			}
			start, sum, _ := records(t, out)
			if !start.LimitEnforced {
				t.Skip("the limit is not enforced here")
			}
			checkWithinAllowance(t, sum, host, device)
		})
	}
}

// checkWithinAllowance fails t unless a finished run's summary shows the
// memory contract kept at the grid point (host, device budgets): the
// account names those budgets, the allowance is host + device + model
// step, the device tiers add up and stay within the device budget or the
// run records the overrun as a deviation, and the cgroup's peak stays
// within host budget + device tiers + model step (the kernel may overshoot
// a limit by a few pages: 1 MiB).
func checkWithinAllowance(t *testing.T, sum metrics.SummaryRecord, host, device int64) {
	t.Helper()
	m := sum.Memory
	if sum.Outcome != metrics.OutcomeDone || m == nil {
		t.Fatalf("outcome %s, memory account %+v", sum.Outcome, m)
	}
	if m.HostBudgetBytes != host || m.DeviceBudgetBytes != device || m.AllowanceBytes() != host+device+m.ModelStepBytes {
		t.Fatalf("memory account %+v: not the grid point's budgets (host %d, device %d) + model step", m, host, device)
	}
	var tiers int64
	for _, b := range m.DeviceTiers {
		tiers += b
	}
	if tiers != m.DeviceTierBytes {
		t.Fatalf("device tiers %v sum to %d, account says %d", m.DeviceTiers, tiers, m.DeviceTierBytes)
	}
	if m.DeviceTierBytes > device && !hasDeviation(sum.Deviations, "exceed the") {
		t.Fatalf("device tiers %d over the %d device budget without a deviation: %q", m.DeviceTierBytes, device, sum.Deviations)
	}
	if limit := host + m.DeviceTierBytes + m.ModelStepBytes; sum.PeakCgroupBytes <= 0 || sum.PeakCgroupBytes > limit+(1<<20) {
		t.Fatalf("cgroup peak %d over host %d + device tiers %d + model step %d", sum.PeakCgroupBytes, host, m.DeviceTierBytes, m.ModelStepBytes)
	}
	t.Logf("cgroup peak %d MiB of host %d MiB + device tiers %d MiB (budget %d MiB) + step %d MiB; deviations %q",
		sum.PeakCgroupBytes>>20, host>>20, m.DeviceTierBytes>>20, device>>20, m.ModelStepBytes>>20, sum.Deviations)
}

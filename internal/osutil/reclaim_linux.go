package osutil

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ProactiveReclaim describes the proactive reclaim this host runs beside
// the memory limits, "" when none is on: DAMON's sysfs kdamonds with a
// pageout scheme running, and the damon_reclaim module when enabled. Such
// a reclaimer pages out memory that has been idle for some seconds, page
// cache included, whatever a run's cgroup allows, so a run's cache
// residency and fault counts are not only its limit's doing (DESIGN §5,
// "Host pressure").
func ProactiveReclaim() string { return proactiveReclaimAt("/sys") }

// proactiveReclaimAt reads the sysfs tree under sys (a parameter so that
// tests can use a fixture tree).
func proactiveReclaimAt(sys string) string {
	var out []string
	kdamonds, _ := filepath.Glob(filepath.Join(sys, "kernel/mm/damon/admin/kdamonds/[0-9]*"))
	sort.Strings(kdamonds)
	for _, kd := range kdamonds {
		if readTrim(filepath.Join(kd, "state")) != "on" {
			continue
		}
		contexts, _ := filepath.Glob(filepath.Join(kd, "contexts/[0-9]*"))
		sort.Strings(contexts)
		for _, ctx := range contexts {
			aggrUs, _ := strconv.ParseInt(readTrim(filepath.Join(ctx, "monitoring_attrs/intervals/aggr_us")), 10, 64)
			memory := "memory"
			switch readTrim(filepath.Join(ctx, "operations")) {
			case "paddr":
				memory = "the host's memory"
			case "vaddr", "fvaddr":
				memory = "some processes' memory"
			}
			schemes, _ := filepath.Glob(filepath.Join(ctx, "schemes/[0-9]*"))
			sort.Strings(schemes)
			for _, s := range schemes {
				if readTrim(filepath.Join(s, "action")) != "pageout" {
					continue
				}
				ageAggrs, _ := strconv.ParseInt(readTrim(filepath.Join(s, "access_pattern/age/min")), 10, 64)
				quota, _ := strconv.ParseInt(readTrim(filepath.Join(s, "quotas/bytes")), 10, 64)
				resetMs, _ := strconv.ParseInt(readTrim(filepath.Join(s, "quotas/reset_interval_ms")), 10, 64)
				d := fmt.Sprintf("DAMON pageout (kdamond %s) of %s idle ≥ %s, %s",
					filepath.Base(kd), memory, seconds(ageAggrs*aggrUs), rate(quota, resetMs))
				if m := readTrim(filepath.Join(s, "watermarks/metric")); m != "" && m != "none" {
					d += ", when " + m + " is within its watermarks"
				}
				out = append(out, d)
			}
		}
	}
	mod := filepath.Join(sys, "module/damon_reclaim/parameters")
	if readTrim(filepath.Join(mod, "enabled")) == "Y" {
		ageUs, _ := strconv.ParseInt(readTrim(filepath.Join(mod, "min_age")), 10, 64)
		quota, _ := strconv.ParseInt(readTrim(filepath.Join(mod, "quota_sz")), 10, 64)
		resetMs, _ := strconv.ParseInt(readTrim(filepath.Join(mod, "quota_reset_interval_ms")), 10, 64)
		out = append(out, fmt.Sprintf("damon_reclaim of the host's memory idle ≥ %s, %s, when free memory is within its watermarks",
			seconds(ageUs), rate(quota, resetMs)))
	}
	return strings.Join(out, "; ")
}

// seconds formats a duration in µs ("60 s", "0.5 s", "? s" when unknown).
func seconds(us int64) string {
	if us <= 0 {
		return "? s"
	}
	return oneDecimal(float64(us)/1e6) + " s"
}

// rate formats a quota of bytes per resetMs milliseconds.
func rate(bytes, resetMs int64) string {
	if bytes <= 0 {
		return "no size quota"
	}
	if resetMs <= 0 {
		resetMs = 1000
	}
	perS := float64(bytes) * 1000 / float64(resetMs) / (1 << 20)
	return "up to " + oneDecimal(perS) + " MiB/s"
}

// oneDecimal formats x rounded to one decimal, without a trailing ".0".
func oneDecimal(x float64) string {
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

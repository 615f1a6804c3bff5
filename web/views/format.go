package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"outcore/internal/units"

	"github.com/a-h/templ"
)

// widthStyle is a bar width as a safe inline style.
func widthStyle(pct float64) templ.SafeCSS {
	if pct < 0 {
		pct = 0
	}
	if pct > 100 {
		pct = 100
	}
	return templ.SafeCSS(fmt.Sprintf("width:%.1f%%", pct))
}

// colorStyle is a swatch colour as a safe inline style; only #rrggbb passes.
func colorStyle(c string) templ.SafeCSS {
	if len(c) != 7 || c[0] != '#' {
		return ""
	}
	if _, err := strconv.ParseUint(c[1:], 16, 32); err != nil {
		return ""
	}
	return templ.SafeCSS("background:" + c)
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func itoa(v int) string { return strconv.Itoa(v) }

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// duration formats the time between two unix-ms instants (until 0 = now).
func duration(sinceMS, untilMS int64) string {
	if sinceMS == 0 {
		return "–"
	}
	end := time.Now()
	if untilMS != 0 {
		end = time.UnixMilli(untilMS)
	}
	return units.Duration(end.Sub(time.UnixMilli(sinceMS)))
}

// countsLabel says how many runs finished and how.
func countsLabel(c Counts) string {
	s := fmt.Sprintf("%d/%d runs", c.Finished(), c.Total)
	if c.Running > 0 {
		s += fmt.Sprintf(" · %d running", c.Running)
	}
	if c.OOM > 0 {
		s += fmt.Sprintf(" · %d OOM", c.OOM)
	}
	if c.Failed > 0 {
		s += fmt.Sprintf(" · %d failed", c.Failed)
	}
	switch {
	case c.Cancelled > 0 && c.Dropped == c.Cancelled:
		s += fmt.Sprintf(" · %d cancelled before they started", c.Dropped)
	case c.Dropped > 0:
		s += fmt.Sprintf(" · %d cancelled (%d before they started)", c.Cancelled, c.Dropped)
	case c.Cancelled > 0:
		s += fmt.Sprintf(" · %d cancelled", c.Cancelled)
	}
	if c.Refused > 0 {
		s += fmt.Sprintf(" · %d refused (cannot start)", c.Refused)
	}
	if c.Interrupted > 0 {
		s += fmt.Sprintf(" · %d interrupted", c.Interrupted)
	}
	return s
}

// requeueLabel names what "requeue" starts again: "cancelled/failed".
func requeueLabel(c Counts) string {
	var parts []string
	if c.Cancelled > 0 {
		parts = append(parts, "cancelled")
	}
	if c.Failed > 0 {
		parts = append(parts, "failed")
	}
	if c.Interrupted > 0 {
		parts = append(parts, "interrupted")
	}
	return strings.Join(parts, "/")
}

// sortLabel names a sort key of the experiment list.
func sortLabel(k string) string {
	switch k {
	case "", "created":
		return map[bool]string{true: "newest first", false: "oldest first"}[k == ""]
	case "name":
		return "name A–Z"
	case "-name":
		return "name Z–A"
	case "runs":
		return "fewest runs"
	case "-runs":
		return "most runs"
	case "id":
		return "id"
	}
	return k
}

// runSortLabel names an order of the queue table.
func runSortLabel(k string) string {
	return map[string]string{"": "grid order", "system": "variant", "limit": "memory limit ↑", "-limit": "memory limit ↓",
		"status": "status", "epoch_s": "fastest epoch first", "-epoch_s": "slowest epoch first", "-val": "best accuracy first",
		"started": "started"}[k]
}

// listBodyID is the list's table body id: a filtered list has another, so
// the live stream's inserts (which do not know the filter) leave it alone
// while updates of the rows it shows still apply.
func listBodyID(v ListView) string {
	if v.Filter != "" {
		return "experiment-rows-filtered"
	}
	return "experiment-rows"
}

// queueBodyID is the queue's table body id: a filtered queue has another,
// so the live stream's re-rendering of every row leaves it alone (rows it
// shows still update in place by their own ids).
func queueBodyID(filtered bool) string {
	if filtered {
		return "queue-rows-filtered"
	}
	return "queue-rows"
}

// firstLine is the first line of a text, cut at 120 characters.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if r := []rune(line); len(r) > 120 {
		return string(r[:119]) + "…"
	}
	return line
}

// wideStyle lets a chart card span the whole row.
func wideStyle(wide bool) templ.SafeCSS {
	if wide {
		return "grid-column: 1 / -1"
	}
	return ""
}

func anyRunning(jobs []Job) bool {
	for _, j := range jobs {
		if !j.Finished {
			return true
		}
	}
	return false
}

// jobBar colours a job's progress bar by its state.
func jobBar(state string) string {
	switch state {
	case "done":
		return "done"
	case "failed":
		return "failed"
	}
	return ""
}

// join joins strings for a page.
func join(s []string, sep string) string { return strings.Join(s, sep) }

// contains reports whether list holds v.
func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

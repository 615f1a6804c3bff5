package outcome

import (
	"strings"
	"testing"
	"time"

	"outcore/store"
)

func TestOutcome(t *testing.T) {
	o := Ended(store.RunEnd{Status: store.StatusDone})
	o.Note("warn", "a")
	o.Note("error", "b")
	if o.End.Status != store.StatusDone || o.Left || len(o.Notes) != 2 || o.Notes[1] != (Note{"error", "b"}) {
		t.Fatalf("outcome %+v", o)
	}
	end := Failed(time.Now().Add(-2*time.Second), "start %s: %v", "x", "no such file")
	if end.Status != store.StatusFailed || end.Error != "start x: no such file" || end.TotalS < 2 || !strings.HasPrefix(end.Error, "start") {
		t.Fatalf("failed end %+v", end)
	}
}

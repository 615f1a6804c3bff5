package slurm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRecordsTail(t *testing.T) {
	dir := t.TempDir()
	name := RecordsFileName("12", 0)
	p := filepath.Join(dir, name)
	appendTo := func(s string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	lines := func(ls []RecordLine) []string {
		var out []string
		for _, l := range ls {
			out = append(out, string(l.Line))
		}
		return out
	}
	tail := &RecordsTail{Dir: dir, File: name}
	if got, err := tail.Read(false); err != nil || got != nil {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	appendTo("a\nbb\ncc")
	got, err := tail.Read(false)
	if err != nil || !reflect.DeepEqual(lines(got), []string{"a", "bb"}) || tail.Off != 5 || got[1].End != 5 {
		t.Fatalf("first read: %q (off %d), %v", lines(got), tail.Off, err)
	}
	appendTo("c\n")
	got, _ = tail.Read(false)
	if !reflect.DeepEqual(lines(got), []string{"ccc"}) || tail.Off != 9 {
		t.Fatalf("second read: %q (off %d)", lines(got), tail.Off)
	}
	// Resuming at a committed offset (a restarted server) reads on from there.
	appendTo("d\npartial")
	again := &RecordsTail{Dir: dir, File: name, Off: 5}
	if got, _ := again.Read(false); !reflect.DeepEqual(lines(got), []string{"ccc", "d"}) {
		t.Fatalf("resumed read: %q", lines(got))
	}
	// The job has ended: a last line without newline counts.
	if got, _ := again.Read(true); !reflect.DeepEqual(lines(got), []string{"partial"}) || again.Off != 18 {
		t.Fatalf("final read: %q (off %d)", lines(got), again.Off)
	}
	// A line longer than maxLine is cut; the next line is intact.
	long := strings.Repeat("x", maxLine+10)
	appendTo("\n" + long + "\nafter\n")
	got, _ = again.Read(false)
	if len(got) != 3 || string(got[0].Line) != "" || len(got[1].Line) != maxLine || string(got[2].Line) != "after" {
		t.Fatalf("long line: %d lines, %d bytes", len(got), len(got[1].Line))
	}
	st, _ := os.Stat(p)
	if again.Off != st.Size() {
		t.Fatalf("offset %d after reading everything, file has %d bytes", again.Off, st.Size())
	}
}

func TestRecordsSegmentsAndSummary(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"records-12-1.jsonl", "records-12-0.jsonl", "records-13-0.jsonl", "records-12-x.jsonl", "stderr.log"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	segs, err := RecordsSegments(dir, "12")
	if err != nil || len(segs) != 2 || segs[0].Name != "records-12-0.jsonl" || segs[1].Restart != 1 {
		t.Fatalf("segments: %+v, %v", segs, err)
	}
	if SegmentRestart("records-12-3.jsonl") != 3 || SegmentRestart("") != -1 {
		t.Fatal("SegmentRestart")
	}
	p := filepath.Join(dir, "records-12-0.jsonl")
	body := `{"type":"start"}` + "\n" + `{"type":"summary","outcome":"done","epochs":2}` + "\n" + `{"type":"log","msg":"after"}` + "\n"
	os.WriteFile(p, []byte(body), 0o644)
	sum, raw, err := SummaryUpTo(p, int64(len(body)))
	if err != nil || sum == nil || sum.Outcome != "done" || sum.Epochs != 2 || len(raw) == 0 {
		t.Fatalf("summary: %+v, %v", sum, err)
	}
	if sum, _, _ := SummaryUpTo(p, 17); sum != nil {
		t.Fatal("summary found beyond the offset")
	}
}

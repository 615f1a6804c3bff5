package experiments

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRecordsTail(t *testing.T) {
	dir := t.TempDir()
	name := recordsFileName("12", 0)
	p := filepath.Join(dir, name)
	appendTo := func(s string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	lines := func(ls []recordLine) []string {
		var out []string
		for _, l := range ls {
			out = append(out, string(l.line))
		}
		return out
	}
	tail := &recordsTail{dir: dir, file: name}
	if got, err := tail.read(false); err != nil || got != nil {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	appendTo("a\nbb\ncc")
	got, err := tail.read(false)
	if err != nil || !reflect.DeepEqual(lines(got), []string{"a", "bb"}) || tail.off != 5 || got[1].end != 5 {
		t.Fatalf("first read: %q (off %d), %v", lines(got), tail.off, err)
	}
	appendTo("c\n")
	got, _ = tail.read(false)
	if !reflect.DeepEqual(lines(got), []string{"ccc"}) || tail.off != 9 {
		t.Fatalf("second read: %q (off %d)", lines(got), tail.off)
	}
	// Resuming at a committed offset (a restarted server) reads on from there.
	appendTo("d\npartial")
	again := &recordsTail{dir: dir, file: name, off: 5}
	if got, _ := again.read(false); !reflect.DeepEqual(lines(got), []string{"ccc", "d"}) {
		t.Fatalf("resumed read: %q", lines(got))
	}
	// The job has ended: a last line without newline counts.
	if got, _ := again.read(true); !reflect.DeepEqual(lines(got), []string{"partial"}) || again.off != 18 {
		t.Fatalf("final read: %q (off %d)", lines(got), again.off)
	}
	// A line longer than maxLine is cut; the next line is intact.
	long := strings.Repeat("x", maxLine+10)
	appendTo("\n" + long + "\nafter\n")
	got, _ = again.read(false)
	if len(got) != 3 || string(got[0].line) != "" || len(got[1].line) != maxLine || string(got[2].line) != "after" {
		t.Fatalf("long line: %d lines, %d bytes", len(got), len(got[1].line))
	}
	st, _ := os.Stat(p)
	if again.off != st.Size() {
		t.Fatalf("offset %d after reading everything, file has %d bytes", again.off, st.Size())
	}
}

func TestRecordsSegmentsAndSummary(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"records-12-1.jsonl", "records-12-0.jsonl", "records-13-0.jsonl", "records-12-x.jsonl", "stderr.log"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	segs, err := recordsSegments(dir, "12")
	if err != nil || len(segs) != 2 || segs[0].name != "records-12-0.jsonl" || segs[1].restart != 1 {
		t.Fatalf("segments: %+v, %v", segs, err)
	}
	if segmentRestart("records-12-3.jsonl") != 3 || segmentRestart("") != -1 {
		t.Fatal("segmentRestart")
	}
	p := filepath.Join(dir, "records-12-0.jsonl")
	body := `{"type":"start"}` + "\n" + `{"type":"summary","outcome":"done","epochs":2}` + "\n" + `{"type":"log","msg":"after"}` + "\n"
	os.WriteFile(p, []byte(body), 0o644)
	sum, raw, err := summaryUpTo(p, int64(len(body)))
	if err != nil || sum == nil || sum.Outcome != "done" || sum.Epochs != 2 || len(raw) == 0 {
		t.Fatalf("summary: %+v, %v", sum, err)
	}
	if sum, _, _ := summaryUpTo(p, 17); sum != nil {
		t.Fatal("summary found beyond the offset")
	}
}

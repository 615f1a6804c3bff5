package slurm

// Records of a Slurm run arrive through files of the run's directory on
// storage the server and the nodes share (docs/ARCHITECTURE.md
// "Executors"): the job appends JSON lines to records-<job>-<n>.jsonl (n
// counts its requeues); the server reads the complete lines appended since
// the offset it committed last, hands them to the same ingester as a local
// child's stdout, and commits the new offset in the transaction that stores
// what it read. A server killed at any point resumes at the committed
// offset: no record is lost, none is stored twice.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/metrics"
)

// recordsReadMax bounds what one read takes from a records file.
const recordsReadMax = 8 << 20

// maxLine caps one record line; longer lines are cut.
const maxLine = 1 << 20

// RecordsTail reads a records file from an offset.
type RecordsTail struct {
	Dir  string
	File string // name in Dir; "" until the job's first execution wrote one
	Off  int64
	// skipping: the offset is inside a line longer than maxLine, which is
	// dropped up to its end.
	Skipping bool
}

// RecordLine is one complete line and the offset just after it.
type RecordLine struct {
	Line []byte
	End  int64
}

// Read returns the complete lines appended since the last read; with
// final, a last line without its newline too (the job has ended). The
// offset advances past what it returns. A line longer than maxLine is cut
// to its first maxLine bytes, as a child's stdout line is.
func (t *RecordsTail) Read(final bool) ([]RecordLine, error) {
	if t.File == "" {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(t.Dir, t.File))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []RecordLine
	buf := make([]byte, recordsReadMax)
	for {
		n, err := f.ReadAt(buf, t.Off)
		if err != nil && err != io.EOF {
			return out, err
		}
		chunk := buf[:n]
		pos := 0
		for {
			i := bytes.IndexByte(chunk[pos:], '\n')
			if i < 0 {
				break
			}
			line := chunk[pos : pos+i]
			pos += i + 1
			if t.Skipping { // the tail of a cut line
				t.Skipping = false
				continue
			}
			if len(line) > maxLine {
				line = line[:maxLine]
			}
			out = append(out, RecordLine{Line: append([]byte(nil), line...), End: t.Off + int64(pos)})
		}
		rest := chunk[pos:]
		switch {
		case t.Skipping:
			pos += len(rest) // still inside a cut line
		case len(rest) > maxLine:
			out = append(out, RecordLine{Line: append([]byte(nil), rest[:maxLine]...), End: t.Off + int64(n)})
			pos, t.Skipping = n, true
		}
		t.Off += int64(pos)
		if n < len(buf) { // end of file
			if final && pos < n && !t.Skipping {
				out = append(out, RecordLine{Line: append([]byte(nil), chunk[pos:]...), End: t.Off + int64(n-pos)})
				t.Off += int64(n - pos)
			}
			return out, nil
		}
	}
}

// RecordsSegment is one records file of a job.
type RecordsSegment struct {
	Name    string
	Restart int
}

// RecordsSegments lists the records files of a job in dir, oldest
// execution first.
func RecordsSegments(dir, jobID string) ([]RecordsSegment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := "records-" + jobID + "-"
	var segs []RecordsSegment
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, prefix), ".jsonl"))
		if err != nil || n < 0 {
			continue
		}
		segs = append(segs, RecordsSegment{Name: name, Restart: n})
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].Restart < segs[j].Restart })
	return segs, nil
}

// SegmentRestart is the execution number of a records file name, -1 when
// the name is not one.
func SegmentRestart(name string) int {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || !strings.HasSuffix(name, ".jsonl") {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(name[i+1:], ".jsonl"))
	if err != nil {
		return -1
	}
	return n
}

// SummaryUpTo returns the last summary record in the first upTo bytes of
// a records file: a restarted server needs the summary it had already
// committed past.
func SummaryUpTo(path string, upTo int64) (*metrics.SummaryRecord, json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, upTo))
	sc.Buffer(make([]byte, 64<<10), maxLine+1)
	var sum *metrics.SummaryRecord
	var raw json.RawMessage
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if !bytes.Contains(line, []byte(`"summary"`)) {
			continue
		}
		var rec metrics.SummaryRecord
		if json.Unmarshal(line, &rec) == nil && rec.Type == metrics.TypeSummary {
			sum, raw = &rec, append(json.RawMessage(nil), line...)
		}
	}
	if err := sc.Err(); err != nil {
		return sum, raw, fmt.Errorf("read %s: %w", path, err)
	}
	return sum, raw, nil
}

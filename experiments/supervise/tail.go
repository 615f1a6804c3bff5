package supervise

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// TailBytes is how much of a child's stderr a run keeps in the database
// (a local child's, or a job's stderr file).
const TailBytes = 64 << 10

// Tail keeps the last max bytes written to it: a child's stderr.
type Tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool // bytes were dropped from the front (MarkCut)
	// line is the start of the line being written (up to 512 bytes) and
	// fatal the last line that began with a crash marker, seen even when
	// the goroutine traces after it push it out of the tail.
	line  []byte
	fatal string
}

// isFailureLine reports whether a stderr line starts a Go crash report.
func isFailureLine(l string) bool {
	return strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "runtime: out of memory")
}

// NewTail returns a Tail of at most max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if room := 512 - len(t.line); room > 0 {
			t.line = append(t.line, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			break
		}
		if l := strings.TrimRight(string(t.line), "\r "); isFailureLine(l) {
			t.fatal = l
		}
		t.line = t.line[:0]
		rest = rest[i+1:]
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String returns the tail, starting at a line boundary when bytes were
// dropped, as valid UTF-8.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return string(bytes.ToValidUTF8(b, []byte(string(utf8.RuneError))))
}

// LastLine returns the line that says why the child failed: the last
// `fatal error:` or `panic:` line of a Go runtime crash (its goroutine
// traces come after it), else the last non-empty line.
func (t *Tail) LastLine() string {
	s := t.String()
	t.mu.Lock()
	fatal := t.fatal
	if l := strings.TrimRight(string(t.line), "\r "); isFailureLine(l) {
		fatal = l
	}
	t.mu.Unlock()
	if l := FailureLine(s); isFailureLine(l) || fatal == "" {
		return l
	}
	return fatal
}

// FailureLine picks the line of a child's stderr that says why it failed
// (see LastLine).
func FailureLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n\r "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], "\r ")
		if isFailureLine(l) {
			// "panic: x [recovered]" is followed by the panic that ended it.
			return l
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return strings.TrimRight(lines[i], "\r ")
		}
	}
	return ""
}

// MarkCut says bytes before the first written were dropped, as when a
// file's last bytes are read: String then starts at a line boundary.
func (t *Tail) MarkCut() {
	t.mu.Lock()
	t.cut = true
	t.mu.Unlock()
}

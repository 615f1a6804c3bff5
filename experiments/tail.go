package experiments

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// TailBytes is how much of a child's stderr a run keeps in the database.
const TailBytes = 64 << 10

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool // bytes were dropped from the front
}

func newTail(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String returns the tail, starting at a line boundary when bytes were
// dropped, as valid UTF-8.
func (t *tailBuffer) String() string {
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

// lastLine returns the last non-empty line of the tail.
func (t *tailBuffer) lastLine() string {
	s := bytes.TrimRight([]byte(t.String()), "\n\r ")
	if i := bytes.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return string(s)
}

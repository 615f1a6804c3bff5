package web

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"outcore/internal/units"

	"github.com/gofiber/fiber/v2"
)

// Request bodies are streamed (fiber's StreamRequestBody): the server
// reserves nothing for a declared Content-Length and reads at most an
// 8 KiB prefetch before a handler runs. bodyGate, before authentication,
// refuses what is never read; readBody, after it, reads the body within
// Limits.MaxBody. A request whose body is left unread ends its connection,
// so the unread bytes are never taken for the next request.

const bodyReadKey = "outcore-body-read"

// bodyGate refuses compressed bodies (415) and declared bodies over the
// limit (413) before anything else, and closes the connection after any
// answer that left a body unread.
func bodyGate(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		h := &c.Request().Header
		hasBody := h.ContentLength() != 0 && h.ContentLength() != -2
		if hasBody {
			defer func() {
				if c.Locals(bodyReadKey) == nil {
					discardSmallBody(c)
					c.Set(fiber.HeaderConnection, "close")
				}
			}()
		}
		if ce := strings.TrimSpace(string(h.Peek(fiber.HeaderContentEncoding))); ce != "" && !strings.EqualFold(ce, "identity") {
			return fiber.NewError(fiber.StatusUnsupportedMediaType,
				fmt.Sprintf("compressed request bodies are not accepted (Content-Encoding: %s): send the body uncompressed (at most %s)", units.Clip(ce, 40), bodySize.Format(int64(limit))))
		}
		if n := h.ContentLength(); n > limit {
			return fiber.NewError(fiber.StatusRequestEntityTooLarge,
				fmt.Sprintf("request body of %d bytes is over this server's limit of %s", n, bodySize.Format(int64(limit))))
		}
		return c.Next()
	}
}

// maxDiscard is the most of an unread body read and thrown away before
// the connection closes, so that a client still sending a refused body
// (a 254 KiB gzip bomb) reads the answer instead of a connection reset.
// Nothing is kept, and the read ends at the request's read timeout.
const maxDiscard = 512 << 10

// discardSmallBody reads and drops the rest of a body up to maxDiscard
// (bodies declared larger are not waited for).
func discardSmallBody(c *fiber.Ctx) {
	req := c.Request()
	if !req.IsBodyStream() || req.Header.ContentLength() > maxDiscard {
		return
	}
	_, _ = io.CopyN(io.Discard, req.BodyStream(), maxDiscard)
}

// readBody reads a streamed body, at most limit bytes (413 beyond), so that
// handlers see it whole (c.Body, form values). The buffer grows as bytes
// arrive (never to more than the declared length), and every byte of it
// is first taken from budget, which all requests share: when the bodies
// held at once would pass it, the request is refused with 503 — the bound
// holds on loopback without authentication too.
func readBody(limit int, budget *byteBudget) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		if !req.IsBodyStream() {
			c.Locals(bodyReadKey, true)
			return c.Next()
		}
		want := limit + 1 // chunked: unknown until read
		if n := req.Header.ContentLength(); n >= 0 && n <= limit {
			want = n
		}
		held := 0
		defer func() { budget.give(held) }()
		buf := []byte(nil)
		r := req.BodyStream()
		for len(buf) < want {
			if len(buf) == cap(buf) {
				grow := min(max(2*cap(buf), 64<<10), want) - cap(buf)
				if !budget.take(grow) {
					c.Set(fiber.HeaderRetryAfter, "5")
					return fiber.NewError(fiber.StatusServiceUnavailable,
						fmt.Sprintf("the server holds %s of request bodies already, its limit: try again in a few seconds", bodySize.Format(int64(budget.max))))
				}
				held += grow
				nb := make([]byte, len(buf), cap(buf)+grow)
				copy(nb, buf)
				buf = nb
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("reading the request body: %v", err))
			}
		}
		if len(buf) > limit {
			return fiber.NewError(fiber.StatusRequestEntityTooLarge,
				fmt.Sprintf("request body is over this server's limit of %s", bodySize.Format(int64(limit))))
		}
		req.SetBodyRaw(buf)
		c.Locals(bodyReadKey, true)
		return c.Next()
	}
}

// byteBudget is a count of bytes shared by requests (Limits.MaxBodiesInFlight).
type byteBudget struct {
	max int
	mu  sync.Mutex
	n   int
}

func (b *byteBudget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n+n > b.max {
		return false
	}
	b.n += n
	return true
}

func (b *byteBudget) give(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n -= n
}

func (b *byteBudget) used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// bodySize writes a body limit exactly, for people ("4 MiB", "100 bytes").
var bodySize = units.ByteFormat{Exact: true, Space: true}

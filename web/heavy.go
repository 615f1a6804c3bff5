package web

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// heavySlots limits answers that take much memory or time to write at
// once (bundle.zip of a large experiment, the page of a 10,000-run
// experiment): beyond the limit a request is answered 503 with
// Retry-After at once instead of waiting, so a page that makes a browser
// ask for many of them, or a local process asking for them in parallel,
// cannot exhaust the server's memory.
type heavySlots struct {
	busy  string // the refusal, %d the limit
	slots chan struct{}
}

func newHeavySlots(busy string, n int) *heavySlots {
	return &heavySlots{busy: busy, slots: make(chan struct{}, n)}
}

// take claims a slot; the caller must give it back with release (once).
func (h *heavySlots) take() error {
	select {
	case h.slots <- struct{}{}:
		return nil
	default:
		return &fiber.Error{Code: fiber.StatusServiceUnavailable, Message: fmt.Sprintf(h.busy, cap(h.slots))}
	}
}

func (h *heavySlots) release() { <-h.slots }

// used is the number of slots taken.
func (h *heavySlots) used() int { return len(h.slots) }

// busy answers a request refused by take (Retry-After: 10).
func busy(c *fiber.Ctx, err error) error {
	c.Set(fiber.HeaderRetryAfter, "10")
	return err
}

// rendered holds one of h's slots for a request from before its handler
// runs until its answer has been written to the connection, or dropped
// with it: the answer's bytes stay in memory until then, so a client that
// reads slowly keeps its slot (at most Limits.WriteTimeout). A refused
// request (an error) gives its slot back at once.
func rendered(h *heavySlots) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := h.take(); err != nil {
			return busy(c, err)
		}
		var once sync.Once
		release := func() { once.Do(h.release) }
		err := c.Next()
		resp := c.Response()
		if err != nil || resp.IsBodyStream() {
			release()
			return err
		}
		// The HTTP server closes a body stream once it has written it
		// (or when the connection ends first): that gives the slot back.
		raw := resp.Body()
		body := resp.SwapBody(nil) // the buffer, now ours
		if len(body) == 0 {
			body = raw // set with c.Send (a cached answer): read only
		}
		resp.SetBodyStream(&releasingReader{Reader: bytes.NewReader(body), release: release}, len(body))
		return nil
	}
}

// releasingReader is an answer's body that gives a slot back when closed.
type releasingReader struct {
	io.Reader
	release func()
}

func (r *releasingReader) Close() error {
	r.release()
	return nil
}

// otherSite says why a request a browser sent for another site's page is
// refused ("" when it is not: it names no other site). Sec-Fetch-Site
// must be absent (scripts, older browsers), same-origin or none (typed,
// a bookmark); another site's top-level navigation (a link) passes when
// links is set. An Origin, when sent, must be the dashboard's own.
func otherSite(c *fiber.Ctx, p *Proxies, links bool) string {
	site := c.Get("Sec-Fetch-Site")
	switch site {
	case "", "same-origin", "none":
	default:
		if !links || c.Get("Sec-Fetch-Mode") != "navigate" || c.Get("Sec-Fetch-Dest") != "document" {
			return fmt.Sprintf("Sec-Fetch-Site: %s", site)
		}
	}
	if o := c.Get(fiber.HeaderOrigin); o != "" && !SameOrigin(o, p.Host(c)) {
		return fmt.Sprintf("Origin %q", o)
	}
	return ""
}

// downloadGuard refuses (403) the costly downloads (chart files, CSV
// exports, bundles) to requests sent for another site's page, links
// included: a page elsewhere must not make the browser fetch them (the
// limits would then lock the researcher out).
func downloadGuard(p *Proxies) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if why := otherSite(c, p, false); why != "" {
			return fiber.NewError(fiber.StatusForbidden, fmt.Sprintf("this download is not served to requests from another site (%s): open it from the dashboard", why))
		}
		return c.Next()
	}
}

// pageGuard refuses (403) pages, charts and large API answers to another
// site's requests other than links followed (top-level navigations): an
// image, a script or a fetch of another site's page.
func pageGuard(p *Proxies) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if why := otherSite(c, p, true); why != "" {
			return fiber.NewError(fiber.StatusForbidden, fmt.Sprintf("this page is not served to requests from another site (%s) other than a link followed: open it from the dashboard", why))
		}
		return c.Next()
	}
}

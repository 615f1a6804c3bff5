package web

import (
	"fmt"

	"github.com/gofiber/fiber/v2"
)

// heavySlots limits answers that take much memory or time to write at
// once (bundle.zip of a large experiment): beyond the limit a request is
// answered 503 with Retry-After at once instead of waiting, so a page
// that makes a browser ask for many of them cannot exhaust the server.
type heavySlots struct {
	what  string
	slots chan struct{}
}

func newHeavySlots(what string, n int) *heavySlots {
	return &heavySlots{what: what, slots: make(chan struct{}, n)}
}

// take claims a slot; the caller must give it back with release (once).
func (h *heavySlots) take() error {
	select {
	case h.slots <- struct{}{}:
		return nil
	default:
		return &fiber.Error{Code: fiber.StatusServiceUnavailable, Message: fmt.Sprintf(
			"%d %s downloads are being written already, the most this server writes at once: try again when one has finished", cap(h.slots), h.what)}
	}
}

func (h *heavySlots) release() { <-h.slots }

// busy answers a request refused by take (Retry-After: 10).
func busy(c *fiber.Ctx, err error) error {
	c.Set(fiber.HeaderRetryAfter, "10")
	return err
}

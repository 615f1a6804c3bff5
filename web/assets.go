package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"path"
	"sync"

	"github.com/gofiber/fiber/v2"

	"outcore/static"
)

// staticFiles serves the embedded static/ tree under /static/. Vendored
// files carry their version in their name and are cached for a day; the
// dashboard's own CSS and JS are revalidated by ETag.
func staticFiles() fiber.Handler {
	var mu sync.Mutex
	etags := map[string]string{}
	return func(c *fiber.Ctx) error {
		name := c.Params("*")
		if !fs.ValidPath(name) || name == "." {
			return fiber.ErrNotFound
		}
		b, err := fs.ReadFile(static.FS, name)
		if err != nil {
			return fiber.ErrNotFound
		}
		mu.Lock()
		tag, ok := etags[name]
		if !ok {
			sum := sha256.Sum256(b)
			tag = `"` + hex.EncodeToString(sum[:8]) + `"`
			etags[name] = tag
		}
		mu.Unlock()
		c.Set(fiber.HeaderETag, tag)
		if path.Dir(name) == "vendor" {
			c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
		} else {
			c.Set(fiber.HeaderCacheControl, "no-cache")
		}
		if c.Get(fiber.HeaderIfNoneMatch) == tag {
			return c.SendStatus(fiber.StatusNotModified)
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		c.Set(fiber.HeaderContentType, ct)
		return c.Send(b)
	}
}

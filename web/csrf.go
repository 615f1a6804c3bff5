package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// CSRF protection by a signed double-submit token: every browser gets a
// cookie holding nonce.HMAC(key, nonce); a request that changes state
// (POST, PUT, PATCH, DELETE) must repeat the cookie's value in the
// X-CSRF-Token header (htmx requests, set by app.js) or the _csrf form field
// (plain forms). Another site can make the browser send the cookie but can
// neither read it nor forge one without the key. Requests a browser marks as
// cross-site (Sec-Fetch-Site) are refused outright.
const (
	CSRFCookie = "outcore_csrf"
	CSRFHeader = "X-CSRF-Token"
	CSRFField  = "_csrf"
	csrfLocal  = "csrf"
)

// CSRF checks and mints the tokens.
type CSRF struct {
	key []byte
}

// NewCSRF returns a checker signing with key (at least 16 bytes; the server
// keeps it in the data directory so tokens outlive restarts).
func NewCSRF(key []byte) *CSRF { return &CSRF{key: append([]byte(nil), key...)} }

func (x *CSRF) sign(nonce string) string {
	m := hmac.New(sha256.New, x.key)
	m.Write([]byte(nonce))
	return nonce + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// valid says whether tok is a token this server minted.
func (x *CSRF) valid(tok string) bool {
	nonce, _, ok := strings.Cut(tok, ".")
	if !ok || len(nonce) < 16 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(x.sign(nonce)), []byte(tok)) == 1
}

func (x *CSRF) mint() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("csrf: no randomness: " + err.Error())
	}
	return x.sign(base64.RawURLEncoding.EncodeToString(b))
}

// Middleware sets the cookie where it is missing or invalid, makes the token
// available to templates (Token) and rejects unsafe requests without a
// matching token with 403.
func (x *CSRF) Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		tok := c.Cookies(CSRFCookie)
		fresh := !x.valid(tok)
		if fresh {
			tok = x.mint()
			c.Cookie(&fiber.Cookie{
				Name: CSRFCookie, Value: tok, Path: "/",
				HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
				SessionOnly: true,
			})
		}
		c.Locals(csrfLocal, tok)
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
			return c.Next()
		}
		if c.Get("Sec-Fetch-Site") == "cross-site" {
			return fiber.NewError(fiber.StatusForbidden, "CSRF: cross-site request refused")
		}
		sent := c.Get(CSRFHeader)
		if sent == "" {
			sent = c.FormValue(CSRFField)
		}
		if fresh || sent == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(tok)) != 1 {
			return fiber.NewError(fiber.StatusForbidden, "CSRF token missing or wrong: reload the page and try again")
		}
		return c.Next()
	}
}

// Token is the CSRF token of the current request, for forms and the page's meta tag.
func Token(c *fiber.Ctx) string {
	s, _ := c.Locals(csrfLocal).(string)
	return s
}

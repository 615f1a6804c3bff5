package web

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Auth guards a dashboard reachable from other machines (`outcore serve
// --auth-file FILE`). Every request must carry one of the file's
// credentials:
//
//   - a token, sent as "Authorization: Bearer <token>" (scripts, the JSON
//     API), from a line "token <token>";
//   - a user name and password, sent by HTTP basic auth (browsers ask for
//     them once), from a line "<user>:<password>".
//
// Blank lines and lines starting with # are ignored. Tokens need at least
// 16 characters and passwords at least 8. Credentials travel in clear text
// over plain HTTP: put a TLS reverse proxy in front (README, "Serving
// beyond this machine").
type Auth struct {
	tokens  [][32]byte          // SHA-256 of each token
	users   map[string][32]byte // user -> SHA-256 of the password
	limiter *loginLimiter       // set by Middleware
}

// Minimum credential lengths.
const (
	minTokenLen    = 16
	minPasswordLen = 8
)

// ErrAuthFile is wrapped by every error about an auth file's content.
var ErrAuthFile = errors.New("auth file")

// LoadAuthFile reads an auth file. It must not be readable by group or
// others (it holds secrets), and must hold at least one credential.
func LoadAuthFile(path string) (*Auth, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrAuthFile, path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w %s: mode %v lets other users read the credentials; chmod 600 %s", ErrAuthFile, path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrAuthFile, path, err)
	}
	a, err := ParseAuth(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ParseAuth reads the content of an auth file (see Auth).
func ParseAuth(b []byte) (*Auth, error) {
	a := &Auth{users: map[string][32]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if tok, ok := strings.CutPrefix(line, "token "); ok {
			tok = strings.TrimSpace(tok)
			if len(tok) < minTokenLen || strings.ContainsAny(tok, " \t") {
				return nil, fmt.Errorf("%w line %d: a token needs at least %d characters and no spaces", ErrAuthFile, n, minTokenLen)
			}
			a.tokens = append(a.tokens, sha256.Sum256([]byte(tok)))
			continue
		}
		user, pass, ok := strings.Cut(line, ":")
		switch {
		case !ok || user == "":
			return nil, fmt.Errorf("%w line %d: want \"token <secret>\" or \"<user>:<password>\"", ErrAuthFile, n)
		case strings.ContainsAny(user, " \t"):
			return nil, fmt.Errorf("%w line %d: user %q has a space", ErrAuthFile, n, user)
		case len(pass) < minPasswordLen:
			return nil, fmt.Errorf("%w line %d: the password of %q needs at least %d characters", ErrAuthFile, n, user, minPasswordLen)
		}
		if _, dup := a.users[user]; dup {
			return nil, fmt.Errorf("%w line %d: user %q given twice", ErrAuthFile, n, user)
		}
		a.users[user] = sha256.Sum256([]byte(pass))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAuthFile, err)
	}
	if len(a.tokens) == 0 && len(a.users) == 0 {
		return nil, fmt.Errorf("%w: no credential (want lines \"token <secret>\" or \"<user>:<password>\")", ErrAuthFile)
	}
	return a, nil
}

// Allows reports whether an Authorization header value carries one of the
// credentials. Comparisons take the same time whatever matches.
func (a *Auth) Allows(header string) bool {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(header), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "bearer":
		sum := sha256.Sum256([]byte(rest))
		ok := 0
		for _, t := range a.tokens {
			ok |= subtle.ConstantTimeCompare(sum[:], t[:])
		}
		return ok == 1
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return false
		}
		user, pass, found := strings.Cut(string(raw), ":")
		want, known := a.users[user]
		if !found {
			return false
		}
		sum := sha256.Sum256([]byte(pass))
		eq := subtle.ConstantTimeCompare(sum[:], want[:])
		return known && eq == 1
	}
	return false
}

// LoginCookie names the cookie a browser gets when it authenticates: a
// random nonce signed by the server, which tells the login back-off
// (backoff.go) "this browser has logged in here before". It grants
// nothing (every request still needs its credential) and cannot be
// forged; its holder is counted apart from its address, so wrong
// credentials sent under its address (a spoofed X-Forwarded-For) and the
// server-wide cap do not lock it out.
const LoginCookie = "outcore_login"

// loginCookieAge is how long a browser keeps its login cookie.
const loginCookieAge = 30 * 24 * time.Hour

// Middleware answers 401 to a request without a valid credential, asking
// a browser for basic auth. A request with a wrong credential counts as a
// failed login of its client: the login cookie's browser (signed with
// key), else the address client names (Proxies.Client); after
// FreeLoginFailures of them in a row the client's attempts are refused
// with 429 for LoginBackoff, and attempts without a login cookie are
// refused while the server-wide cap holds (backoff.go). Failures are
// logged to logger (nil: not logged) and counted (FailedLogins).
func (a *Auth) Middleware(client func(*fiber.Ctx) string, key []byte, logger *log.Logger) fiber.Handler {
	a.limiter = newLoginLimiter(logger)
	m := hmac.New(sha256.New, key)
	m.Write([]byte("outcore login cookie"))
	cookies := NewCSRF(m.Sum(nil))
	return func(c *fiber.Ctx) error {
		who, known := client(c), false
		if v := c.Cookies(LoginCookie); cookies.valid(v) {
			nonce, _, _ := strings.Cut(v, ".")
			who, known = "login cookie "+nonce[:12], true
		}
		cred := c.Get(fiber.HeaderAuthorization)
		outcome := noCredential
		switch {
		case a.Allows(cred):
			outcome = rightCredential
		case strings.TrimSpace(cred) != "":
			outcome = wrongCredential
		}
		if d, all := a.limiter.attempt(who, known, outcome); d > 0 {
			secs := int((d + time.Second - 1) / time.Second)
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
			if all {
				return fiber.NewError(fiber.StatusTooManyRequests, fmt.Sprintf(
					"too many failed logins on this server from many addresses: try again in %d s (a browser that has logged in here before is let through)", secs))
			}
			return fiber.NewError(fiber.StatusTooManyRequests,
				fmt.Sprintf("too many failed logins from your address: try again in %d s", secs))
		}
		if outcome == rightCredential {
			if !known {
				c.Cookie(&fiber.Cookie{Name: LoginCookie, Value: cookies.mint(), Path: "/",
					HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, MaxAge: int(loginCookieAge / time.Second)})
			}
			return c.Next()
		}
		if len(a.users) > 0 {
			c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="outcore", charset="UTF-8"`)
		} else {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="outcore"`)
		}
		return fiber.NewError(fiber.StatusUnauthorized, "authentication required: a token (Authorization: Bearer …) or the user name and password of the server's --auth-file")
	}
}

// FailedLogins is the number of requests refused for a wrong credential,
// and of attempts refused while their client was backing off.
func (a *Auth) FailedLogins() (wrong, blocked int64) {
	if a == nil || a.limiter == nil {
		return 0, 0
	}
	return a.limiter.failed.Load(), a.limiter.blocked.Load()
}

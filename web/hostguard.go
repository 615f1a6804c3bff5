package web

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// hostGuard refuses (421) a request whose Host names a host not in the
// list, or a port that is no TCP port: a page of another site that a DNS
// rebinding points at the server cannot read or change the dashboard. The
// raw Host header is always judged, from a trusted proxy too: on loopback
// every local process (the victim's browser included) connects from the
// proxy's address, so a forwarded header must never widen who is served.
// From a trusted proxy X-Forwarded-Host, when sent, must name an allowed
// host as well (it is the host Origin checks compare with).
func hostGuard(hosts []string, p *Proxies) fiber.Handler {
	ok := map[string]bool{}
	for _, h := range hosts {
		ok[strings.ToLower(h)] = true
	}
	check := func(what, hostport string) error {
		if !ok[hostName(hostport)] {
			return fiber.NewError(fiber.StatusMisdirectedRequest, fmt.Sprintf("%s %q is not served here", what, hostport))
		}
		if msg := portProblem(hostport); msg != "" {
			return fiber.NewError(fiber.StatusMisdirectedRequest, fmt.Sprintf("%s %q: %s", what, hostport, msg))
		}
		return nil
	}
	return func(c *fiber.Ctx) error {
		if err := check("host", string(c.Request().Header.Host())); err != nil {
			return err
		}
		if fh := p.forwardedHost(c); fh != "" {
			if err := check("forwarded host", fh); err != nil {
				return err
			}
		}
		return c.Next()
	}
}

// portProblem says what is wrong with the port of a host[:port] ("" when
// it has none or a TCP port, 1 to 65535).
func portProblem(hostport string) string {
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 || strings.HasSuffix(hostport, "]") || strings.Count(hostport, ":") > 1 && !strings.HasPrefix(hostport, "[") {
		return ""
	}
	port := hostport[i+1:]
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
		return fmt.Sprintf("port %q is not a TCP port (1 to 65535)", port)
	}
	return ""
}

// hostName is the lower-case name of a host[:port] without port or
// brackets.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.Trim(strings.ToLower(host), "[]")
}

// originGuard refuses (403) a request that changes state when its Origin
// (or, without one, its Referer) is another site than the one the request
// is addressed to. It adds to the CSRF token (csrf.go): a browser names the
// page that sent a request, and a page of another origin has no business
// changing anything. Requests naming neither (scripts, curl) pass here and
// still need the token.
func originGuard(p *Proxies) fiber.Handler {
	return func(c *fiber.Ctx) error {
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
			return c.Next()
		}
		from, what := string(c.Request().Header.Peek(fiber.HeaderOrigin)), "Origin"
		if from == "" {
			from, what = string(c.Request().Header.Referer()), "Referer"
		}
		if from == "" {
			return c.Next()
		}
		if !SameOrigin(from, p.Host(c)) {
			return fiber.NewError(fiber.StatusForbidden, fmt.Sprintf("%s %q is not this dashboard: requests that change something must come from its own pages", what, from))
		}
		return c.Next()
	}
}

// SameOrigin reports whether an Origin or Referer value names the host a
// request is addressed to (host as in the Host header): the same name, and
// the same port where the Host gives one (else the origin's scheme's
// default port, as a TLS proxy in front sends it).
func SameOrigin(from, host string) bool {
	u, err := url.Parse(from)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return false // also "null" (sandboxed frames, file: pages)
	}
	if hostName(u.Host) != hostName(host) {
		return false
	}
	want := ""
	if _, port, err := net.SplitHostPort(host); err == nil {
		want = port
	}
	got := u.Port()
	if got == "" {
		got = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if want == "" {
		return got == "80" || got == "443"
	}
	return got == want
}

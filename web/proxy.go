package web

import (
	"fmt"
	"net"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Proxies are the reverse proxies (`outcore serve --trusted-proxies`)
// whose X-Forwarded-Host, X-Forwarded-Proto and X-Forwarded-For headers
// the server believes. A request from any other address is judged by what
// it carries itself: the raw Host header and the connection's address
// (docs/SECURITY.md). Without proxies nothing forwarded is believed.
type Proxies struct {
	nets []*net.IPNet
}

// ParseProxies reads a list of proxy addresses or CIDR ranges
// ("127.0.0.1", "10.0.0.0/8", "::1").
func ParseProxies(list []string) (*Proxies, error) {
	p := &Proxies{}
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			ip := net.ParseIP(strings.Trim(s, "[]"))
			if ip == nil {
				return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR range", s)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			p.nets = append(p.nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR range", s)
		}
		p.nets = append(p.nets, n)
	}
	return p, nil
}

// Trusts reports whether ip is one of the proxies.
func (p *Proxies) Trusts(ip net.IP) bool {
	if p == nil || ip == nil {
		return false
	}
	for _, n := range p.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Strings lists the proxies (for fiber's own checks and the log).
func (p *Proxies) Strings() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.nets))
	for i, n := range p.nets {
		out[i] = n.String()
	}
	return out
}

// remoteIP is the address of the connection's other end.
func remoteIP(c *fiber.Ctx) net.IP { return c.Context().RemoteIP() }

// viaProxy reports whether the request came through a trusted proxy.
func (p *Proxies) viaProxy(c *fiber.Ctx) bool { return p.Trusts(remoteIP(c)) }

// Host is the host (with port, as sent) the request names: the raw Host
// header, or X-Forwarded-Host's first entry when a trusted proxy sent it.
// hostGuard has checked both against the allowed hosts.
func (p *Proxies) Host(c *fiber.Ctx) string {
	if fh := p.forwardedHost(c); fh != "" {
		return fh
	}
	return string(c.Request().Header.Host())
}

// forwardedHost is X-Forwarded-Host's first entry from a trusted proxy
// ("" from anyone else, or when not sent).
func (p *Proxies) forwardedHost(c *fiber.Ctx) string {
	if !p.viaProxy(c) {
		return ""
	}
	fh := string(c.Request().Header.Peek(fiber.HeaderXForwardedHost))
	first, _, _ := strings.Cut(fh, ",")
	return strings.TrimSpace(first)
}

// Client is the address a request comes from: the connection's, or, from a
// trusted proxy, the nearest X-Forwarded-For entry that is not itself a
// trusted proxy (entries further left are the client's own claims).
func (p *Proxies) Client(c *fiber.Ctx) string {
	ip := remoteIP(c)
	if !p.Trusts(ip) {
		return ip.String()
	}
	hops := strings.Split(string(c.Request().Header.Peek(fiber.HeaderXForwardedFor)), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := net.ParseIP(strings.Trim(strings.TrimSpace(hops[i]), "[]"))
		if h == nil {
			break
		}
		if !p.Trusts(h) {
			return h.String()
		}
	}
	return ip.String()
}

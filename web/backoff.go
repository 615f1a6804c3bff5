package web

import (
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"
)

// Failed logins slow their sender down: after FreeLoginFailures wrong
// credentials in a row a client must wait LoginBackoff(n) before its next
// attempt, which is refused (429, Retry-After) until then, with the right
// credentials too. A client is a browser that has logged in before (its
// login cookie, auth.go), else an address (Proxies.Client: behind a
// trusted proxy X-Forwarded-For's, which whoever connects from the
// proxy's address chooses). So that ever new addresses gain nothing, the
// server also caps failed logins in all: maxLoginFailureBurst, then one
// per loginFailureRefill; while the cap holds, attempts without a login
// cookie are refused (429). Every failure is counted (`outcore serve`
// reports the count when it stops) and logged, at most once a second per
// client.
const (
	FreeLoginFailures = 5
	maxLoginBackoff   = 5 * time.Minute
	// loginForget is how long after its last failure a client's count is
	// forgotten.
	loginForget = 15 * time.Minute
	// maxLoginClients bounds the table of clients (the oldest are dropped).
	maxLoginClients = 10000
	// maxLoginFailureBurst failed logins may come at once from all
	// clients together; then one more each loginFailureRefill.
	maxLoginFailureBurst = 100
	loginFailureRefill   = time.Second
)

// LoginBackoff is the wait after n failed logins in a row: none for the
// first FreeLoginFailures, then 1 s doubling up to 5 minutes.
func LoginBackoff(n int) time.Duration {
	if n < FreeLoginFailures {
		return 0
	}
	k := n - FreeLoginFailures
	if k >= 9 { // 2^9 s > 5 min
		return maxLoginBackoff
	}
	return min(time.Second<<k, maxLoginBackoff)
}

// loginLimiter keeps the failure counts of clients, and the server-wide
// allowance of failures.
type loginLimiter struct {
	mu      sync.Mutex
	clients map[string]*loginClient
	// allowance is how many failures may still come before the
	// server-wide cap holds, as of allowanceAt.
	allowance   float64
	allowanceAt time.Time
	failed      atomic.Int64 // wrong credentials
	blocked     atomic.Int64 // attempts refused while backing off
	log         *log.Logger
	now         func() time.Time
	lastCapLog  time.Time
}

type loginClient struct {
	failures int
	last     time.Time // last failure
	until    time.Time // no attempt before
	logged   time.Time
}

func newLoginLimiter(logger *log.Logger) *loginLimiter {
	return &loginLimiter{clients: map[string]*loginClient{}, log: logger, now: time.Now, allowance: maxLoginFailureBurst}
}

// refill brings the server-wide allowance up to now (l.mu held).
func (l *loginLimiter) refill(now time.Time) {
	if !l.allowanceAt.IsZero() {
		l.allowance += float64(now.Sub(l.allowanceAt)) / float64(loginFailureRefill)
	}
	l.allowance = min(l.allowance, maxLoginFailureBurst)
	l.allowanceAt = now
}

// Outcomes of a login attempt.
const (
	noCredential = iota
	rightCredential
	wrongCredential
)

// attempt decides a login attempt whose credential has been checked
// (outcome) and records it, in one step, so that attempts sent at once
// cannot all pass before their failures count: it returns how long the
// client must still wait (0: the attempt counts; else it is refused, the
// right credential too) and whether the server-wide cap is what holds it
// back. A client with a login cookie (known) is not held by the
// server-wide cap.
func (l *loginLimiter) attempt(client string, known bool, outcome int) (time.Duration, bool) {
	l.mu.Lock()
	now := l.now()
	if lc := l.clients[client]; lc != nil {
		if d := lc.until.Sub(now); d > 0 {
			l.mu.Unlock()
			l.blocked.Add(1)
			return d, false
		}
	}
	l.refill(now)
	if !known && l.allowance < 1 {
		l.mu.Unlock()
		l.blocked.Add(1)
		return time.Duration((1 - l.allowance) * float64(loginFailureRefill)), true
	}
	switch outcome {
	case rightCredential:
		delete(l.clients, client)
		l.mu.Unlock()
	case wrongCredential:
		l.fail(client, now) // unlocks
	default:
		l.mu.Unlock()
	}
	return 0, false
}

// fail records a wrong credential from client (l.mu held; fail unlocks
// it, then logs).
func (l *loginLimiter) fail(client string, now time.Time) {
	l.failed.Add(1)
	l.allowance = max(l.allowance-1, 0)
	capped := l.allowance < 1 && now.Sub(l.lastCapLog) >= time.Minute
	if capped {
		l.lastCapLog = now
	}
	lc := l.clients[client]
	if lc == nil || now.Sub(lc.last) > loginForget {
		if lc == nil && len(l.clients) >= maxLoginClients {
			l.prune(now)
		}
		lc = &loginClient{}
		l.clients[client] = lc
	}
	lc.failures++
	lc.last = now
	d := LoginBackoff(lc.failures)
	lc.until = now.Add(d)
	n := lc.failures
	quiet := now.Sub(lc.logged) < time.Second
	if !quiet {
		lc.logged = now
	}
	l.mu.Unlock()
	if capped && l.log != nil {
		l.log.Printf("%d failed logins in all within moments: attempts without a login cookie are refused until the rate falls to one a %v", maxLoginFailureBurst, loginFailureRefill)
	}
	if !quiet && l.log != nil {
		msg := fmt.Sprintf("failed login from %s (%d in a row", client, n)
		if d > 0 {
			msg += fmt.Sprintf("; its next attempt is refused for %v", d)
		}
		l.log.Print(msg + ")")
	}
}

// prune drops forgotten clients, and the oldest half when all are recent.
func (l *loginLimiter) prune(now time.Time) {
	for k, c := range l.clients {
		if now.Sub(c.last) > loginForget {
			delete(l.clients, k)
		}
	}
	if len(l.clients) < maxLoginClients {
		return
	}
	var mean int64
	for _, c := range l.clients {
		mean += c.last.UnixNano() / int64(len(l.clients))
	}
	cut := time.Unix(0, mean)
	for k, c := range l.clients {
		if !c.last.After(cut) {
			delete(l.clients, k)
		}
	}
}

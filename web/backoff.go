package web

import (
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"
)

// Failed logins slow their sender down: after FreeLoginFailures wrong
// credentials in a row a client address must wait LoginBackoff(n) before
// its next attempt, which is refused (429, Retry-After) until then, with
// the right credentials too. Every failure is counted (`outcore serve`
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

// loginLimiter keeps the failure counts of client addresses.
type loginLimiter struct {
	mu      sync.Mutex
	clients map[string]*loginClient
	failed  atomic.Int64 // wrong credentials
	blocked atomic.Int64 // attempts refused while backing off
	log     *log.Logger
	now     func() time.Time
}

type loginClient struct {
	failures int
	last     time.Time // last failure
	until    time.Time // no attempt before
	logged   time.Time
}

func newLoginLimiter(logger *log.Logger) *loginLimiter {
	return &loginLimiter{clients: map[string]*loginClient{}, log: logger, now: time.Now}
}

// wait is how long the client must still wait before an attempt (0: may try).
func (l *loginLimiter) wait(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	lc := l.clients[client]
	if lc == nil {
		return 0
	}
	if d := lc.until.Sub(l.now()); d > 0 {
		l.blocked.Add(1)
		return d
	}
	return 0
}

// fail records a wrong credential from client and returns the wait it now owes.
func (l *loginLimiter) fail(client string) time.Duration {
	l.failed.Add(1)
	l.mu.Lock()
	now := l.now()
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
	if !quiet && l.log != nil {
		msg := fmt.Sprintf("failed login from %s (%d in a row", client, n)
		if d > 0 {
			msg += fmt.Sprintf("; its next attempt is refused for %v", d)
		}
		l.log.Print(msg + ")")
	}
	return d
}

// succeed forgets the client's failures.
func (l *loginLimiter) succeed(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.clients, client)
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

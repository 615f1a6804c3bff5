package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// Config is what the dashboard needs.
type Config struct {
	Store Store
	Queue Queue
	// DataDir is the data directory: datasets live in DataDir/datasets.
	DataDir string
	// ImportRoot is the only folder dataset imports may read from
	// (default DataDir/imports; created if missing).
	ImportRoot string
	// CSRFKey signs CSRF tokens (at least 16 bytes). Default: read from
	// DataDir/csrf.key, created with 32 random bytes if missing.
	CSRFKey []byte
	// Heartbeat is the interval of SSE comment lines (default 15 s).
	Heartbeat time.Duration
	// Log receives request errors and feed problems (default: stderr).
	Log *log.Logger
	// Hosts are the only Host header names (without port) requests may
	// carry: a page of another site that a DNS rebinding points at the
	// server then cannot read the dashboard. Empty = the loopback names
	// (localhost, 127.0.0.1, ::1). The check is never off.
	Hosts []string
	// Auth, when set, requires a token or basic-auth credentials on every
	// request (see Auth).
	Auth *Auth
	// TrustedProxies are the reverse proxies whose X-Forwarded-* headers
	// count (Proxies); nil = none.
	TrustedProxies *Proxies
	// Limits bound requests and connections (zero fields: defaults).
	Limits Limits
	// JobGrace is how long shutdown waits for a running dataset job after
	// cancelling it (default 10 s); a job blocked in the kernel (a stalled
	// network mount, a FIFO) is then abandoned, not waited for.
	JobGrace time.Duration
	// Storage, when set, says where the measurement of this host's storage
	// for the I/O floor stands (the queue's background probe): every page
	// shows it while it runs, and the run pages name the profile.
	Storage func() views.StorageState
}

// Server is the dashboard: the fiber app, the live feed and the dataset jobs.
type Server struct {
	cfg  Config
	app  *fiber.App
	hub  *Hub
	feed *Feed
	jobs *Jobs
	// charts keeps experiments' encoded charts by fingerprint (charts.json).
	charts *chartsCache
	// draining is set when shutdown begins: requests that change state are
	// refused from then on (503), while the listener closes.
	draining atomic.Bool
	// bodies counts the request body bytes held (readBody).
	bodies *byteBudget
	// bundles limits the bundle.zip downloads written at once.
	bundles *heavySlots
	// renders limits the pages, charts and figures rendered at once.
	renders *heavySlots
	// ln is the guarded listener Serve serves on (nil before).
	ln atomic.Pointer[GuardedListener]
}

// New builds the dashboard. It reads the store's newest event id, so the
// live streams start from there.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Queue == nil {
		return nil, errors.New("web: Config needs a Store and a Queue")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("web: Config needs a DataDir")
	}
	if cfg.ImportRoot == "" {
		cfg.ImportRoot = filepath.Join(cfg.DataDir, "imports")
	}
	if err := os.MkdirAll(cfg.ImportRoot, 0o755); err != nil {
		return nil, fmt.Errorf("web: import folder: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = log.New(os.Stderr, "serve: ", log.LstdFlags)
	}
	if len(cfg.CSRFKey) == 0 {
		k, err := loadOrCreateKey(filepath.Join(cfg.DataDir, "csrf.key"))
		if err != nil {
			return nil, err
		}
		cfg.CSRFKey = k
	}
	if len(cfg.CSRFKey) < 16 {
		return nil, errors.New("web: CSRF key shorter than 16 bytes")
	}
	if len(cfg.Hosts) == 0 {
		cfg.Hosts = LoopbackHosts
	}
	if cfg.JobGrace <= 0 {
		cfg.JobGrace = 10 * time.Second
	}
	seed, err := cfg.Store.LastEventID(ctx)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Server{cfg: cfg}
	s.hub = NewHub(seed, 512, 4096)
	s.feed = &Feed{Source: cfg.Queue, Store: cfg.Store, Hub: s.hub, Log: cfg.Log, cursor: seed,
		DataDir: cfg.DataDir, Digests: report.NewDigestCache(2000)}
	cfg.Limits = cfg.Limits.WithDefaults()
	s.cfg.Limits = cfg.Limits
	lim := cfg.Limits
	s.jobs = NewJobs(cfg.DataDir, 20)
	s.jobs.SetMax(lim.MaxJobs)
	s.jobs.log, s.jobs.root = cfg.Log, cfg.ImportRoot
	s.app = fiber.New(fiber.Config{
		AppName:               "outcore",
		DisableStartupMessage: true,
		ErrorHandler:          s.errorHandler,
		// Values read from a request (FormValue, Params, ...) are copies:
		// fasthttp reuses its buffers, and a dataset job or an experiment
		// created later must not see another request's bytes.
		Immutable:   true,
		ReadTimeout: lim.ReadTimeout,
		IdleTimeout: lim.IdleTimeout,
		// Write timeouts are set per request (writeTimeouts): event
		// streams stay open for hours.
		BodyLimit: lim.MaxBody,
		// Bodies are streamed: nothing is reserved for a declared length
		// before the request is authenticated (body.go); multipart forms
		// are parsed by the handlers that want them, from the body read.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		ReadBufferSize:               lim.MaxHeader,
		// X-Forwarded-* only from the trusted proxies (proxy.go).
		EnableTrustedProxyCheck: true,
		TrustedProxies:          cfg.TrustedProxies.Strings(),
	})
	srv := s.app.Server()
	srv.HeaderReceived = s.writeTimeouts
	// "Expect: 100-continue" is not judged here: fasthttp would answer
	// 417 itself, without the security headers. A body declared over the
	// limit is refused with 413 before it is read (BodyLimit, bodyGate).
	srv.Logger = &fasthttpLogger{l: cfg.Log}
	// A connection that has answered waits idle for its next request: it
	// may then be shed for a new connection (listener.go).
	srv.ConnState = func(c net.Conn, st fasthttp.ConnState) {
		if gc, ok := c.(*guardedConn); ok && st == fasthttp.StateIdle {
			gc.Idle()
		}
	}
	s.routes()
	return s, nil
}

// writeTimeouts gives each request its write timeout: the long answers
// (event streams, bundles) get Limits.StreamWriteTimeout, others
// Limits.WriteTimeout.
func (s *Server) writeTimeouts(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if isLongAnswer(string(h.RequestURI())) {
		return fasthttp.RequestConfig{WriteTimeout: s.cfg.Limits.StreamWriteTimeout}
	}
	return fasthttp.RequestConfig{WriteTimeout: s.cfg.Limits.WriteTimeout}
}

// isLongAnswer reports whether a request URI asks for a long answer: an
// event stream, a bundle or an export.
func isLongAnswer(uri string) bool {
	return uri == "/events" || strings.HasPrefix(uri, "/events?") || strings.Contains(uri, "/bundle.zip") || strings.Contains(uri, "/export/")
}

// markServed tells the connection (listener.go) that it serves a request
// now, whose body has been read: it is not shed until it has answered
// (an event stream or a download only after idle connections).
func markServed(c *fiber.Ctx) error {
	if gc, ok := c.Context().Conn().(*guardedConn); ok {
		gc.Served(isLongAnswer(string(c.Request().RequestURI())))
	}
	return c.Next()
}

// markAuthenticated tells the connection its client has shown a
// credential: it is shed after those of clients that have not.
func markAuthenticated(c *fiber.Ctx) error {
	if gc, ok := c.Context().Conn().(*guardedConn); ok {
		gc.Authenticated()
	}
	return c.Next()
}

// fasthttpLogger sends the HTTP server's own messages (malformed requests,
// over-long heads) to the dashboard's log, at most one a second: a flood
// of bad requests must not flood the log (the lines left out are counted
// in the next one).
type fasthttpLogger struct {
	l       *log.Logger
	mu      sync.Mutex
	last    time.Time
	dropped int
}

func (f *fasthttpLogger) Printf(format string, a ...any) {
	f.mu.Lock()
	now := time.Now()
	if now.Sub(f.last) < time.Second {
		f.dropped++
		f.mu.Unlock()
		return
	}
	f.last, a = now, append(a, f.dropped)
	f.dropped = 0
	f.mu.Unlock()
	f.l.Printf("http: "+format+" (%d similar lines left out)", a...)
}

// Listener is the guarded listener Serve serves on (nil before Serve).
func (s *Server) Listener() *GuardedListener { return s.ln.Load() }

// App is the fiber app (for tests: app.Test).
func (s *Server) App() *fiber.App { return s.app }

// Hub is the live event hub.
func (s *Server) Hub() *Hub { return s.hub }

// Serve runs the live feed and serves HTTP on ln until ctx ends, then
// shuts down: every event stream is closed first so that shutdown does
// not wait on them.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	feedDone := make(chan struct{})
	feedCtx, stopFeed := context.WithCancel(ctx)
	go func() {
		defer close(feedDone)
		s.feed.Run(feedCtx)
	}()
	g, ok := ln.(*GuardedListener)
	if !ok {
		lim := s.cfg.Limits
		g = NewGuardedListener(ln, ConnCap(lim.MaxConns, FDLimit()), lim.MaxConnsPerClient, s.cfg.Log)
		g.Exempt = s.cfg.TrustedProxies.Trusts
	}
	s.ln.Store(g)
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.app.Listener(g) }()
	var err error
	select {
	case err = <-serveErr:
	case <-ctx.Done():
	}
	s.draining.Store(true)
	stopFeed()
	<-feedDone
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := s.Shutdown(shutdownCtx); serr != nil && err == nil {
		err = serr
	}
	return err
}

// Shutdown stops taking requests that change state, closes the event
// streams, shuts the HTTP server down (forcibly after ctx's deadline), and
// then stops the dataset jobs, waiting at most Config.JobGrace for one
// that does not end when cancelled.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.hub.Close()
	var err error
	if s.app.Server() != nil {
		err = s.app.ShutdownWithContext(ctx)
		if err != nil && strings.Contains(err.Error(), "not running") {
			err = nil
		}
	}
	if !s.jobs.CloseWithin(s.cfg.JobGrace) {
		s.cfg.Log.Printf("a dataset job did not stop within %v of its cancellation (blocked reading its input?); abandoning it", s.cfg.JobGrace)
	}
	return err
}

// refuseWhileDraining answers 503 to requests that change state once
// shutdown has begun.
func (s *Server) refuseWhileDraining(c *fiber.Ctx) error {
	if s.draining.Load() {
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		default:
			c.Set(fiber.HeaderConnection, "close")
			return fiber.NewError(fiber.StatusServiceUnavailable, "the server is shutting down; nothing was changed")
		}
	}
	return c.Next()
}

// recoverPanic turns a panic in a handler into a 500 answer (logged with
// its stack), so that one bad request does not stop the server.
func (s *Server) recoverPanic(c *fiber.Ctx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Log.Printf("panic serving %s %s: %v\n%s", c.Method(), c.Path(), p, debug.Stack())
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return c.Next()
}

// safeStream wraps a body stream writer (it runs after the handler has
// returned, outside recoverPanic) so that a panic ends the stream only.
func safeStream(log *log.Logger, what string, fn func(w *bufio.Writer)) func(w *bufio.Writer) {
	return func(w *bufio.Writer) {
		defer func() {
			if p := recover(); p != nil {
				log.Printf("panic in %s: %v\n%s", what, p, debug.Stack())
				fmt.Fprintf(w, "\n# stopped: internal error: %v\n", p)
				w.Flush()
			}
		}()
		fn(w)
	}
}

// errorHandler answers failed requests: a page for browsers, plain text for
// htmx and API callers.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	code := fiber.StatusInternalServerError
	msg := err.Error()
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		code = fe.Code
	case errors.Is(err, store.ErrNotFound):
		code = fiber.StatusNotFound
	case errors.Is(err, store.ErrConflict):
		code = fiber.StatusConflict
	}
	if code >= 500 {
		s.cfg.Log.Printf("%s %s: %v", c.Method(), c.Path(), err)
	}
	setSecurityHeaders(c)
	c.Status(code)
	if isAPI(c) {
		return c.JSON(fiber.Map{"error": msg, "status": code})
	}
	if c.Get("HX-Request") != "" || !strings.Contains(c.Get(fiber.HeaderAccept), "text/html") {
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.SendString(msg)
	}
	title := fmt.Sprintf("%d %s", code, httpStatusText(code))
	return renderPage(c, views.ErrorPage(pageMeta(c, title, ""), msg))
}

// isNotFound reports whether err says a row is missing.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

func httpStatusText(code int) string {
	switch code {
	case 400:
		return "Bad request"
	case 401:
		return "Authentication required"
	case 403:
		return "Forbidden"
	case 404:
		return "Not found"
	case 409:
		return "Conflict"
	case 421:
		return "Misdirected request"
	case 422:
		return "Invalid input"
	case 503:
		return "Unavailable"
	}
	return "Error"
}

// pageMeta fills the parts of every page.
func pageMeta(c *fiber.Ctx, title, nav string) views.Page {
	p := views.Page{Title: title, Nav: nav, CSRF: Token(c)}
	if f, ok := c.Locals(storageKey).(func() views.StorageState); ok && f != nil {
		p.Storage = f()
	}
	return p
}

// storageKey holds Config.Storage in each request's locals (pageMeta).
const storageKey = "outcore.storage"

// renderPage writes a full HTML page.
func renderPage(c *fiber.Ctx, comp interface {
	Render(ctx context.Context, w io.Writer) error
}) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// loadOrCreateKey reads a secret key file, creating it (mode 0600) if missing.
func loadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(b) >= 16 {
		return b, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	tok := (&CSRF{}).mint() // random bytes, encoded
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []byte(tok), nil
}

// storageFragment answers the storage banner's poll (views.StorageBanner).
func (s *Server) storageFragment(c *fiber.Ctx) error {
	st := views.StorageState{}
	if s.cfg.Storage != nil {
		st = s.cfg.Storage()
	}
	return renderPage(c, views.StorageBanner(st))
}

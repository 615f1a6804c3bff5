package web

import (
	"time"
)

// Limits bound what requests may take of the server. They hold before
// authentication: a client that has not (yet) shown a credential holds at
// most a connection slot, a header buffer and an 8 KiB body prefetch, and
// only until ReadTimeout (docs/SECURITY.md).
type Limits struct {
	// MaxBody is the largest request body (default 4 MiB). A declared
	// larger Content-Length is refused (413) before the body is read; no
	// body is read before the request is authenticated.
	MaxBody int
	// MaxBodiesInFlight bounds the request body bytes held at once, over
	// all requests (default 64 MiB): a body that would go past it is
	// refused with 503. Bodies are held as they arrive, not as announced.
	MaxBodiesInFlight int
	// MaxHeader is the largest request head: request line and headers
	// (default 8 KiB; larger ones get 431).
	MaxHeader int
	// ReadTimeout bounds reading one request, head and body (default 30 s).
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection without a next request
	// (default 30 s).
	IdleTimeout time.Duration
	// WriteTimeout bounds writing one answer (default 60 s); event streams
	// and bundle downloads get StreamWriteTimeout instead.
	WriteTimeout time.Duration
	// StreamWriteTimeout bounds the long answers (default 12 h).
	StreamWriteTimeout time.Duration
	// MaxConns caps the open connections (default 2048, and always below
	// the process's file-descriptor limit less FDReserve).
	MaxConns int
	// MaxConnsPerClient caps the open connections of one address
	// (default 128).
	MaxConnsPerClient int
	// MaxBundles caps bundle.zip downloads being written at once
	// (default 2); more get 503.
	MaxBundles int
	// MaxRenders caps the pages, charts, figures and large API answers
	// rendered or being written at once (default 4); more get 503. A
	// 10,000-run experiment's page is 7.65 MB and takes some 70 MB to
	// render.
	MaxRenders int
	// MaxJobs caps dataset jobs waiting or running (default 8); more are
	// refused (503).
	MaxJobs int
}

// FDReserve is how many file descriptors the connection cap leaves to
// the rest of the server: the database, run logs, datasets, children.
const FDReserve = 256

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxBody, 4<<20)
	def(&l.MaxBodiesInFlight, 64<<20)
	def(&l.MaxHeader, 8<<10)
	defD(&l.ReadTimeout, 30*time.Second)
	defD(&l.IdleTimeout, 30*time.Second)
	defD(&l.WriteTimeout, 60*time.Second)
	defD(&l.StreamWriteTimeout, 12*time.Hour)
	def(&l.MaxConns, 2048)
	def(&l.MaxConnsPerClient, 128)
	def(&l.MaxBundles, 2)
	def(&l.MaxRenders, 4)
	def(&l.MaxJobs, 8)
	return l
}

// ConnCap is the connection cap given a file-descriptor limit: at most
// want, and at most fdLimit-FDReserve (at least 16), so that accepting
// connections never takes the descriptors the server needs for its own
// files. fdLimit <= 0 means unknown.
func ConnCap(want int, fdLimit int64) int {
	if fdLimit <= 0 {
		return want
	}
	room := fdLimit - FDReserve
	if room < 16 {
		room = 16
	}
	if int64(want) > room {
		return int(room)
	}
	return want
}

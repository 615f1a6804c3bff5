package web

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"outcore/report"
)

// routes is the dashboard's one route table.
func (s *Server) routes() {
	csrf := NewCSRF(s.cfg.CSRFKey)
	s.charts = newChartsCache(32)
	s.bundles = newHeavySlots("%d bundle.zip downloads are being written already, the most this server writes at once: try again when one has finished", s.cfg.Limits.MaxBundles)
	s.renders = newHeavySlots("%d pages, charts and figures are being rendered already, the most this server renders at once: try again in a few seconds", s.cfg.Limits.MaxRenders)
	exp := &ExperimentsHandler{Store: s.cfg.Store, Queue: s.cfg.Queue, DataDir: s.cfg.DataDir, Jobs: s.jobs,
		Digests: report.NewDigestCache(20000), Charts: s.charts, Log: s.cfg.Log,
		Bundles: s.bundles}
	runs := &RunsHandler{Store: s.cfg.Store, Queue: s.cfg.Queue}
	cmpH := &CompareHandler{Store: s.cfg.Store, Digests: exp.Digests, DataDir: s.cfg.DataDir}
	data := &DatasetsHandler{DataDir: s.cfg.DataDir, ImportRoot: s.cfg.ImportRoot, Jobs: s.jobs, Store: s.cfg.Store}
	events := &EventsHandler{Hub: s.hub, Heartbeat: s.cfg.Heartbeat, Log: s.cfg.Log}
	repro := &ReproduceHandler{Store: s.cfg.Store, Queue: s.cfg.Queue, DataDir: s.cfg.DataDir, Jobs: s.jobs, Digests: exp.Digests}

	a := s.app
	proxies := s.cfg.TrustedProxies
	// Every answer carries the security headers, refusals included; then
	// what holds before authentication: the body gate (no compressed or
	// over-long bodies, nothing read yet), the Host check, the credential.
	a.Use(securityHeaders)
	a.Use(s.recoverPanic)
	a.Use(bodyGate(s.cfg.Limits.MaxBody))
	a.Use(hostGuard(s.cfg.Hosts, proxies))
	if s.cfg.Auth != nil {
		a.Use(s.cfg.Auth.Middleware(proxies.Client, s.cfg.CSRFKey, s.cfg.Log), markAuthenticated)
	}
	s.bodies = &byteBudget{max: s.cfg.Limits.MaxBodiesInFlight}
	a.Use(readBody(s.cfg.Limits.MaxBody, s.bodies))
	// Until here the connection may be shed for a new one (listener.go).
	a.Use(markServed)
	a.Use(s.refuseWhileDraining)
	a.Get("/static/*", staticFiles())
	a.Use(originGuard(proxies))
	a.Use(csrf.Middleware())
	a.Use(func(c *fiber.Ctx) error { c.Locals(storageKey, s.cfg.Storage); return c.Next() })

	// Pages, charts, figures and large API answers share the render
	// budget (heavy.go) and are refused to other sites' requests but
	// links; downloads are refused to other sites outright.
	page := []fiber.Handler{pageGuard(proxies), rendered(s.renders)}
	file := []fiber.Handler{downloadGuard(proxies), rendered(s.renders)}
	dl := downloadGuard(proxies)
	with := func(hs []fiber.Handler, h fiber.Handler) []fiber.Handler {
		return append(append([]fiber.Handler(nil), hs...), h)
	}

	a.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/experiments", fiber.StatusSeeOther) })

	a.Get("/experiments", with(page, exp.List)...)
	a.Post("/experiments", exp.Create)
	a.Get("/experiments/new", exp.New)
	a.Get("/experiments/preview", toPage("/experiments/new"))
	a.Post("/experiments/preview", exp.Preview)
	a.Get("/experiments/:id", with(page, exp.Show)...)
	a.Get("/experiments/:id/charts.json", with(page, exp.ChartsJSON)...)
	a.Get("/experiments/:id/runs.json", with(page, exp.RunsView)...)     // runs across parallel axes, ?group=KEY
	a.Get("/experiments/:id/charts/:file", with(file, exp.ChartFile)...) // <chart>.csv, .svg or .pdf
	a.Get("/experiments/:id/export/:file", dl, exp.Export)               // runs.csv, epochs.csv, samples.csv (streamed)
	a.Get("/experiments/:id/bundle.zip", dl, exp.Bundle)                 // streamed, its own slots
	a.Get("/experiments/:id/study.csv", with(file, exp.StudyCSV)...)
	a.Post("/experiments/:id/cancel", exp.Cancel)
	a.Post("/experiments/:id/retry", exp.Retry)
	a.Post("/experiments/:id/rerun", exp.Rerun)
	a.Post("/experiments/:id/meta", exp.Meta)
	a.Post("/experiments/:id/delete", exp.Delete)

	a.Get("/compare", with(page, cmpH.Show)...)
	a.Get("/compare/charts.json", with(page, cmpH.ChartsJSON)...)
	a.Get("/compare/charts/:file", with(file, cmpH.ChartFile)...)
	a.Get("/compare/scale/:file", with(file, cmpH.ScaleFile)...)

	a.Get("/runs", with(page, runs.List)...)
	a.Get("/runs/:id", with(page, runs.Show)...)
	a.Get("/runs/:id/charts.json", with(page, runs.ChartsJSON)...)
	a.Get("/runs/:id/charts/:file", with(file, runs.ChartFile)...)
	a.Post("/runs/:id/cancel", runs.Cancel)
	a.Post("/runs/:id/retry", runs.Retry)

	a.Get("/reproduce", with(page, repro.List)...)
	a.Post("/reproduce/:id", repro.Start)

	a.Get("/storage", s.storageFragment) // the storage measurement's banner, polled while it runs

	a.Get("/datasets", data.List)
	a.Get("/datasets/jobs", data.JobsFragment)
	a.Post("/datasets/generate", data.Generate)
	a.Post("/datasets/import", data.Import)
	a.Post("/datasets/:name/verify", data.Verify)
	a.Post("/datasets/:name/delete", data.Delete)
	// A form that failed validation is shown at its POST address; a
	// reload or a typed address there asks with GET: send it home.
	a.Get("/datasets/generate", toPage("/datasets"))
	a.Get("/datasets/import", toPage("/datasets"))

	a.Get("/events", events.Stream)

	// The JSON API (docs/API.md).
	api := &APIHandler{Store: s.cfg.Store, Queue: s.cfg.Queue}
	a.Get("/api/csrf", api.CSRFToken)
	a.Get("/api/experiments", with(page, api.ListExperiments)...)
	a.Post("/api/experiments", api.CreateExperiment)
	a.Get("/api/experiments/:id", api.GetExperiment)
	a.Get("/api/experiments/:id/runs", with(page, api.ExperimentRuns)...)
	a.Post("/api/experiments/:id/cancel", api.CancelExperiment)
	a.Post("/api/experiments/:id/retry", api.RetryExperiment)
	a.Post("/api/experiments/:id/meta", api.EditExperiment)
	a.Post("/api/experiments/:id/delete", api.DeleteExperiment)
	a.Get("/api/runs/:id", api.GetRun)
	a.Get("/api/runs/:id/epochs", with(page, api.RunEpochs)...)
	a.Get("/api/runs/:id/samples", with(page, api.RunSamples)...)
	a.Post("/api/runs/:id/cancel", api.CancelRun)
	a.Post("/api/runs/:id/retry", api.RetryRun)
	a.All("/api/*", func(c *fiber.Ctx) error {
		return fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("no API endpoint %s %s (docs/API.md)", c.Method(), c.Path()))
	})
}

// LoopbackHosts are the Host names a server on loopback answers to.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// toPage answers a GET at a form's POST address with the form's page.
func toPage(to string) fiber.Handler {
	return func(c *fiber.Ctx) error { return c.Redirect(to, fiber.StatusSeeOther) }
}

// securityHeaders keeps pages from being framed or sniffed and limits
// where scripts come from (everything is served by this server).
func securityHeaders(c *fiber.Ctx) error {
	setSecurityHeaders(c)
	return c.Next()
}

// setSecurityHeaders sets the headers of securityHeaders (the error
// handler sets them too: the HTTP server's own refusals, 431 and 413,
// reach it without the middleware).
func setSecurityHeaders(c *fiber.Ctx) {
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'")
}

// Package web is outcore's dashboard: fiber handlers (one small struct per
// page, routes in routes.go), templ components (web/views), the live event
// stream (Server-Sent Events at GET /events), and the HTTP side of the
// comparison views of DESIGN §6: the charts, tables, figures and CSV come
// from package report, which the handlers serve as JSON, CSV, SVG and PDF.
// It knows the store, the experiment queue and the datasets only through
// the small interfaces declared in deps.go; those services know nothing of
// HTTP.
package web

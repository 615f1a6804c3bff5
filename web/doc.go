// Package web is outcore's dashboard: fiber handlers (one small struct per
// page, routes in routes.go), templ components (web/views), the live event
// stream (Server-Sent Events at GET /events), the comparison views of
// DESIGN §6 (compare.go) and their CSV and SVG/PDF exports. It knows the
// store, the experiment queue and the datasets only through the small
// interfaces declared in deps.go; those services know nothing of HTTP.
package web

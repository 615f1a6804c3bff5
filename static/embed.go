// Package static holds the dashboard's CSS, JavaScript and the pinned
// third-party front-end files (see vendor/VERSIONS), embedded in the binary
// so that serving needs no files on disk and no npm.
package static

import "embed"

// FS holds css/, js/ and vendor/ exactly as they are in the repository.
//
//go:embed css js vendor
var FS embed.FS

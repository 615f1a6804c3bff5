package all

import "outcore/engine/system/systest/toy"

// testOnly are variants registered by this package's tests alone: the toy
// of docs/ARCHITECTURE.md "Adding a system" (engine/system/systest/toy),
// one package on the skeleton and nothing else, which every shared suite
// here runs beside the real variants. It is no part of the product, so
// the docs' variants table does not list it.
var testOnly = map[string]bool{toy.Name: true}

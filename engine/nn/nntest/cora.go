// Package nntest holds test helpers shared by engine/nn's and engine/cuda's
// tests: the Cora dataset as both packages' accuracy tests train on it. It
// depends on engine/graph only, so engine/nn's own (internal) tests can
// import it.
package nntest

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"outcore/engine/graph"
)

// CoraDir is the shared copy of Cora (LINQS files + Planetoid split).
// OUTCORE_CORA overrides it; the Cora tests skip when it is absent.
func CoraDir() string {
	if d := os.Getenv("OUTCORE_CORA"); d != "" {
		return d
	}
	return "../../../shared/datasets/cora"
}

// Cora is Cora in the Planetoid node order: row-normalised binary features
// (X, Nodes × Dim, row-major), the symmetric citation graph without self
// loops as one full block, and the Planetoid split.
type Cora struct {
	X                []float32
	Dim              int
	Labels           []int32
	Block            graph.Block
	Train, Val, Test []int
	Nodes, Classes   int
}

// LoadCora reads Cora from CoraDir, skipping t when it is absent.
func LoadCora(t testing.TB) *Cora {
	dir := CoraDir()
	if _, err := os.Stat(filepath.Join(dir, "cora.content")); err != nil {
		t.Skipf("Cora not found at %s (set OUTCORE_CORA): %v", dir, err)
	}
	lines := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out [][]string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				out = append(out, strings.Split(s, "\t"))
			}
		}
		return out
	}
	c := &Cora{}
	id := map[string]int{}
	for i, l := range lines("derived/planetoid_nodes.txt") {
		id[l[0]] = i
	}
	classes := map[string]int32{}
	for _, l := range lines("derived/planetoid_class_map.txt") {
		k, _ := strconv.Atoi(l[0])
		classes[l[1]] = int32(k)
	}
	c.Nodes, c.Classes = len(id), len(classes)
	content := lines("cora.content")
	c.Dim = len(content[0]) - 2
	c.X = make([]float32, c.Nodes*c.Dim)
	c.Labels = make([]int32, c.Nodes)
	for _, l := range content {
		i := id[l[0]]
		row := c.X[i*c.Dim : (i+1)*c.Dim]
		var s float32
		for k := 0; k < c.Dim; k++ {
			if l[k+1] == "1" {
				row[k] = 1
				s++
			}
		}
		if s > 0 { // row-normalised features
			for k := range row {
				row[k] /= s
			}
		}
		c.Labels[i] = classes[l[c.Dim+1]]
	}
	adj := make([]map[int32]bool, c.Nodes)
	for i := range adj {
		adj[i] = map[int32]bool{}
	}
	for _, l := range lines("cora.cites") {
		a, b := id[l[0]], id[l[1]]
		if a != b {
			adj[a][int32(b)], adj[b][int32(a)] = true, true
		}
	}
	b := graph.Block{NumSrc: c.Nodes, NumDst: c.Nodes, Indptr: make([]int32, c.Nodes+1),
		SrcDeg: make([]int32, c.Nodes), DstDeg: make([]int32, c.Nodes)}
	for i := 0; i < c.Nodes; i++ {
		nb := make([]int32, 0, len(adj[i]))
		for j := range adj[i] {
			nb = append(nb, j)
		}
		sort.Slice(nb, func(p, q int) bool { return nb[p] < nb[q] })
		b.Indices = append(b.Indices, nb...)
		b.Indptr[i+1] = int32(len(b.Indices))
		b.SrcDeg[i], b.DstDeg[i] = int32(len(nb)), int32(len(nb))
	}
	c.Block = b
	split := func(name string) []int {
		var out []int
		for _, l := range lines(name) {
			out = append(out, id[l[1]])
		}
		return out
	}
	c.Train, c.Val, c.Test = split("derived/planetoid_train.txt"), split("derived/planetoid_val.txt"), split("derived/planetoid_test.txt")
	return c
}

// Mask is the label of each node of idx and -1 for every other node.
func (c *Cora) Mask(idx []int) []int32 {
	m := make([]int32, c.Nodes)
	for i := range m {
		m[i] = -1
	}
	for _, i := range idx {
		m[i] = c.Labels[i]
	}
	return m
}

package kit

// The graph a variant samples the reference's batches from: the topology
// where its paper keeps the indices and the training sampler over it,
// loaded as the prepare stage load_topology_s.

import (
	"errors"
	"time"

	"outcore/engine/sample"
	"outcore/engine/train"
)

// Graph is the run's topology, its indices where mode says
// (train.Env.Topology), and the training sampler over it
// (train.Env.NewSampler).
type Graph struct {
	sample.Topology
	Sampler *sample.Sampler
	close   func() error
}

// LoadGraph loads the topology as mode says and builds its sampler; the
// time both take is the prepare stage load_topology_s.
func LoadGraph(env *train.Env, mode string) (*Graph, error) {
	t0 := time.Now()
	topo, closeTopo, err := env.Topology(mode)
	if err != nil {
		return nil, err
	}
	s, err := env.NewSampler(topo)
	if err != nil {
		return nil, errors.Join(err, closeTopo())
	}
	env.PrepareStage("load_topology_s", time.Since(t0))
	return &Graph{Topology: topo, Sampler: s, close: closeTopo}, nil
}

// Close releases what the topology holds.
func (g *Graph) Close() error { return g.close() }

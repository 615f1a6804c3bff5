package kit

// The profile of a variant whose paper keeps the whole topology in host
// memory (GIDS §3.5, Helios §3.2): once the graph is loaded with its
// indices in memory (LoadGraph, "memory"), the budget starts, the
// workspace is profiled over it, and the plan sizes with that workspace
// less the indices (the plan counts them itself, while the profile's base
// holds them: they were loaded before it).

import (
	"context"
	"time"

	"outcore/engine/sample"
	"outcore/engine/train"
)

// PinnedProfile is a run's profile over a topology pinned in host memory.
type PinnedProfile struct {
	Shape  train.DatasetShape
	Budget *Budget
	// WS is the profiled workspace; PlanWS is WS with the pinned indices
	// taken out of its base.
	WS, PlanWS Workspace
}

// ProfilePinned starts env's budget (NewBudget) and profiles batches
// mini-batches over topo, the topology pinned in memory (ProfileStage,
// timed from its start).
func ProfilePinned(ctx context.Context, env *train.Env, topo sample.Topology, batches int) (PinnedProfile, error) {
	p := PinnedProfile{Shape: train.ShapeOf(env.Dataset.Meta), Budget: NewBudget(env)}
	var err error
	if p.WS, err = p.Budget.ProfileStage(ctx, time.Now(), topo, batches); err != nil {
		return p, err
	}
	p.PlanWS = p.WS
	p.PlanWS.BaseBytes = max(0, p.WS.BaseBytes-p.Shape.IndicesBytes())
	return p, nil
}

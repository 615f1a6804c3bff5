// Package kit is the toolkit the variant packages share
// (docs/ARCHITECTURE.md "Adding a system"):
//
//   - variant.go: the skeleton of a variant: Register (a train.Variant
//     with the options of one bind function), Base (name, devices and the
//     deviations known from the configuration; those decided while
//     preparing go through train.Env.Deviate), OnCPU, and the one
//     signature of a variant's pure sizing, Sizer (func(Sizing[O, P]) V,
//     V a Fitter; P the variant's profile, NoProfile for none), which
//     Register requires and makes the variant's MinMemory of
//     (Sizer.MinMemory), and Size, a run's plan (SizingOf) and its least
//     budget (Plan.LeastBudget, which a refusal names);
//   - graph.go: the topology a variant samples and its training sampler,
//     loaded as the prepare stage load_topology_s (LoadGraph);
//   - options.go: the flag-style option Binder (Int, Workers, Float,
//     Bool, Bytes, Size, Enum, Func, Check) with its rules (Range,
//     AtLeast, Above, Below, PowerOfTwo, MultipleOf, Shown), from which a
//     variant's declared options, their parse and their check at
//     validation all come; ProfileBatches, a shared key;
//   - read_block.go, sample_only.go: the shared options read_block (the
//     read granularity) and stages (sampling alone);
//   - budget.go: the memory budget every variant goes through (Budget:
//     Go memory limit, one profiled step held outside the budget, the
//     limit again for the planned heap), the reserve kept free
//     (ReserveBytes), and the lower-bound workspace and search behind each
//     variant's floor (EstimateWorkspace, MinBudget); ProfileStage,
//     profiling recorded as the stage profile_s; TopologyBytes;
//   - host_tier.go: the heap of a variant that pins the graph's indices
//     (PinnedHeap) and the host feature tier the budget holds beside it
//     (FitHostTier), GIDS's CPU buffer and Helios's CPU tier;
//   - profile.go: profiling of one training step (ProfileWorkspace, Ginex
//     §3.5's "short offline profiling") and its accounting (PlanStep,
//     pure);
//   - model_mem.go: the model step held outside the host budget, through
//     the run's train.MemoryLimit;
//   - sampler_pool.go: a pool of sampling workers feeding a queue
//     (StartSamplers), each timed as a sample worker (busy and wait), and
//     its batches in index order (InOrder);
//   - offheap_linux.go: caches and buffers off the Go heap (OffHeap);
//   - gather_mapped_linux.go: the multi-threaded gather of rows from a
//     memory map (internal/osutil maps the file), which measures its
//     threads' device reads, rows from the device and busy/wait
//     (docs/DESIGN.md §5);
//   - first_error.go: the first error of a pipeline's goroutines;
//   - send.go: a pipeline stage's send that gives up when the run stops
//     (Send);
//   - closer.go: a System's Close (Closer: what Prepare opened, closed in
//     order, nil skipped, errors joined under the variant's name).
//
// Nothing here is specific to one paper; a mechanism of one paper lives in
// that variant's package.
package kit

#!/usr/bin/env python3
"""One GraphSAGE training step in PyTorch Geometric, on outcore's reference batch.

The batch of docs/benchmarks/nn.md's BenchmarkSAGEStep: 1000 seeds, fanout
10,10,10, 128-dim inputs, 256 hidden, 47 classes, dropout 0.5, Adam, from a
random graph of 2.4M nodes (ogbn-products' size; here every node has 15
uniform random in-neighbours, so nearly every sampled node is distinct, as in
the benchmark). Two ways of running it on the GPU:

  blocks   : one SAGEConv per layer on that layer's bipartite block
             ((x_src, x_dst), size=(src, dst)): the computation outcore's
             trainer does;
  subgraph : PyG's usual NeighborLoader recipe, every layer over the whole
             sampled subgraph, keeping out[:batch_size] (more work: every
             layer computes every sampled node).

Sampling is PyG's NeighborLoader when pyg-lib or torch-sparse is installed,
else scripts/pyg_common.py's sampler (said in the output). Per batch it
reports sampling (CPU), gathering the input rows (CPU), the host-to-device
copy and the step (forward + loss + backward + Adam, CUDA events); medians
over --batches batches after --warm warm-up batches. Prints one JSON object.

    python3 scripts/pyg_sage_step.py --batches 20 > sage-step.json
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pyg_common import BlockSAGE, have_pyg_sampler, random_csc, sample_csc  # noqa: E402


class SAGE(BlockSAGE):
    def forward_blocks(self, x, blocks):
        return self.forward(x, blocks)

    def forward_subgraph(self, x, edge_index, batch_size):
        for l, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if l < len(self.convs) - 1:
                x = F.dropout(F.relu(x), 0.5, self.training)
        return x[:batch_size]


class _HostEvent:
    """perf_counter stand-in for a CUDA event (--cpu-check only)."""

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1000


CPU_CHECK = False


def ev():
    return _HostEvent() if CPU_CHECK else torch.cuda.Event(enable_timing=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=2_400_000)
    ap.add_argument("--degree", type=int, default=15)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--fanouts", default="10,10,10")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--classes", type=int, default=47)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--cpu-check", action="store_true", help="run on the CPU to check the script (no measurement)")
    args = ap.parse_args()
    global CPU_CHECK
    CPU_CHECK = args.cpu_check
    if not torch.cuda.is_available() and not CPU_CHECK:
        sys.exit("pyg_sage_step: no CUDA device visible to PyTorch")
    dev = torch.device("cpu" if CPU_CHECK else "cuda")
    fanouts = [int(f) for f in args.fanouts.split(",")]
    L = len(fanouts)
    torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    indptr, indices = random_csc(args.nodes, args.degree, args.seed)
    x_all = torch.randn(args.nodes, args.dim)
    y_all = torch.randint(0, args.classes, (args.nodes,))
    setup_s = time.perf_counter() - t0
    dims = [args.dim] + [args.hidden] * (L - 1) + [args.classes]
    gen = torch.Generator().manual_seed(args.seed)
    out = {"gpu": "cpu check" if CPU_CHECK else torch.cuda.get_device_name(0), "torch": torch.__version__,
           "torch_geometric": __import__("torch_geometric").__version__,
           "batch": args.batch, "fanouts": fanouts, "dim": args.dim, "hidden": args.hidden,
           "classes": args.classes, "nodes": args.nodes, "degree": args.degree,
           "graph_setup_s": round(setup_s, 2), "pyg_neighbor_loader": have_pyg_sampler(),
           "float32_matmul_precision": torch.get_float32_matmul_precision()}

    loader = None
    if have_pyg_sampler():
        from torch_geometric.data import Data
        from torch_geometric.loader import NeighborLoader
        # CSC in-neighbours as edge_index (src=indices, dst=col)
        col = torch.arange(args.nodes).repeat_interleave(indptr[1:] - indptr[:-1])
        data = Data(edge_index=torch.stack([indices, col]), num_nodes=args.nodes)
        seeds = torch.randperm(args.nodes, generator=gen)[: args.batch * (args.batches + args.warm)]
        loader = iter(NeighborLoader(data, num_neighbors=fanouts, batch_size=args.batch, input_nodes=seeds))

    for mode in ["blocks", "subgraph"]:
        torch.manual_seed(args.seed)
        model = SAGE(dims).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        rec = {k: [] for k in ["sample_s", "gather_s", "h2d_s", "step_s", "input_rows", "edges"]}
        for it in range(args.warm + args.batches):
            ts = time.perf_counter()
            if mode == "subgraph" and loader is not None:
                sub = next(loader)
                n_id, ei = sub.n_id, sub.edge_index
                nedges = int(ei.shape[1])
                sampler = "torch_geometric.loader.NeighborLoader"
            elif mode == "subgraph":
                # the subgraph recipe without NeighborLoader: the union of the
                # blocks' edges over the final node set
                seeds = torch.randperm(args.nodes, generator=gen)[: args.batch]
                n_id, blocks = sample_csc(indptr, indices, seeds, fanouts, gen)
                ei = torch.cat([b[0] for b in blocks], dim=1).unique(dim=1)
                nedges = int(ei.shape[1])
                sampler = "scripts/pyg_common.py sample_csc (no pyg-lib/torch-sparse)"
            else:
                seeds = torch.randperm(args.nodes, generator=gen)[: args.batch]
                n_id, blocks = sample_csc(indptr, indices, seeds, fanouts, gen)
                nedges = sum(int(b[0].shape[1]) for b in blocks)
                sampler = "scripts/pyg_common.py sample_csc"
            t1 = time.perf_counter()
            xb = x_all[n_id] if CPU_CHECK else x_all[n_id].pin_memory()
            yb = y_all[n_id[: args.batch]]
            t2 = time.perf_counter()
            a, b, c = ev(), ev(), ev()
            a.record()
            xd = xb.to(dev, non_blocking=True)
            yd = yb.to(dev, non_blocking=True)
            if mode == "blocks":
                bd = [(e.to(dev, non_blocking=True), ns, nd) for (e, ns, nd) in blocks]
            else:
                eid = ei.to(dev, non_blocking=True)
            b.record()
            opt.zero_grad(set_to_none=True)
            o = model.forward_blocks(xd, bd) if mode == "blocks" else model.forward_subgraph(xd, eid, args.batch)
            loss = F.cross_entropy(o, yd)
            loss.backward()
            opt.step()
            c.record()
            c.synchronize()
            if it >= args.warm:
                rec["sample_s"].append(t1 - ts)
                rec["gather_s"].append(t2 - t1)
                rec["h2d_s"].append(a.elapsed_time(b) / 1000)
                rec["step_s"].append(b.elapsed_time(c) / 1000)
                rec["input_rows"].append(int(n_id.numel()))
                rec["edges"].append(nedges)
        out[mode] = {k: statistics.median(v) for k, v in rec.items()}
        out[mode]["sampler"] = sampler
        out[mode]["step_s_min"] = min(rec["step_s"])
        out[mode]["step_s_max"] = max(rec["step_s"])
        if mode == "blocks":
            out[mode]["last_block_shapes"] = [{"src": ns, "dst": nd, "edges": int(e.shape[1])} for (e, ns, nd) in blocks]
        print(f"{mode:8s} rows={out[mode]['input_rows']:.0f} edges={out[mode]['edges']:.0f} "
              f"sample={out[mode]['sample_s']*1e3:.1f} ms gather={out[mode]['gather_s']*1e3:.1f} ms "
              f"h2d={out[mode]['h2d_s']*1e3:.2f} ms step={out[mode]['step_s']*1e3:.2f} ms", file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

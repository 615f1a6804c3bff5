#!/usr/bin/env python3
"""Accelerator profile: PyTorch Geometric training-step times over batch shapes.

Measures, on the GPU this runs on, the time of one training step (forward,
cross-entropy, backward, Adam) of SAGE, GCN and GAT over a range of sampled
mini-batch shapes, and the host-to-device time of a batch's input features.
The output is the raw measurement CSV that scripts/fit_profile.py fits into
the profile `outcore train --compute model:PROFILE` reads (format:
engine/accel/profile.go, docs/ARCHITECTURE.md "Accelerator profiles").

The batches have the shape outcore's samplers give its trainer (one bipartite
block per layer, destinations first among the sources): `batch` seeds, then
per layer (last first) `fanout` uniform random neighbours per destination from
a random graph of `--nodes` nodes, deduplicated. Each layer runs PyG's conv on
that block (SAGEConv and GATConv on (x_src, x_dst) with size=(src, dst);
GCNConv on the sources, keeping the destination rows), so every shape
parameter the profile is fitted over (input rows, edges per layer, dims,
layers, model) is the one outcore's trainer sees.

Timing: CUDA events around each step after warm-up steps; the median of the
timed steps. Run on an otherwise idle GPU:

    python3 scripts/pyg_profile.py --out profile-raw.csv --budget-s 150
"""
import argparse
import csv
import itertools
import json
import os
import random
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv, GCNConv, SAGEConv


def sample_blocks(batch, fanouts, nodes, gen, device):
    """Blocks of one mini-batch, first layer first: list of (edge_index, n_src, n_dst).

    edge_index row 0 = local source id, row 1 = local destination id; the first
    n_dst sources are the destinations (outcore's layout)."""
    dst = torch.randperm(nodes, generator=gen, device=device)[:batch]
    blocks = []
    for fo in reversed(fanouts):
        nd = dst.numel()
        nbr = torch.randint(0, nodes, (nd * fo,), generator=gen, device=device)
        allids = torch.cat([dst, nbr])
        uniq, inv = torch.unique(allids, return_inverse=True)
        # local ids: destinations keep 0..nd-1, new sources follow in first-seen order
        local = torch.full((uniq.numel(),), -1, dtype=torch.long, device=device)
        local[inv[:nd]] = torch.arange(nd, device=device)
        newmask = local < 0
        nnew = int(newmask.sum())
        local[newmask] = torch.arange(nd, nd + nnew, device=device)
        src_ids = torch.empty(nd + nnew, dtype=torch.long, device=device)
        src_ids[local] = uniq
        col = local[inv[nd:]]
        row = torch.arange(nd, device=device).repeat_interleave(fo)
        blocks.append((torch.stack([col, row]), nd + nnew, nd))
        dst = src_ids
    blocks.reverse()
    return blocks


class Net(torch.nn.Module):
    """outcore's model layouts (engine/nn/model.go)."""

    def __init__(self, kind, dims, heads):
        super().__init__()
        self.kind = kind
        L = len(dims) - 1
        self.convs = torch.nn.ModuleList()
        for l in range(L):
            i, o = dims[l], dims[l + 1]
            if kind == "sage":
                self.convs.append(SAGEConv(i, o))
            elif kind == "gcn":
                self.convs.append(GCNConv(i, o))
            elif kind == "gat":
                last = l == L - 1
                h = 1 if last else heads
                self.convs.append(GATConv(i, o // h, heads=h, concat=not last, dropout=0.5))
            else:
                raise ValueError(kind)

    def forward(self, x, blocks):
        L = len(self.convs)
        if self.kind != "sage":
            x = F.dropout(x, 0.5, self.training)
        for l, (ei, ns, nd) in enumerate(blocks):
            conv = self.convs[l]
            if self.kind == "gcn":
                x = conv(x, ei)[:nd]
            else:
                x = conv((x, x[:nd]), ei, size=(ns, nd))
            if l < L - 1:
                x = F.elu(x) if self.kind == "gat" else F.relu(x)
                x = F.dropout(x, 0.5, self.training)
        return x


class Timer:
    """CUDA events on a GPU; perf_counter for the CPU syntax check."""

    def __init__(self, cuda):
        self.cuda = cuda

    def __call__(self, fn):
        if not self.cuda:
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / 1000


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def time_steps(model, opt, x, y, blocks, warm, reps, timer):
    def step():
        opt.zero_grad(set_to_none=True)
        out = model(x, blocks)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
    for _ in range(warm):
        step()
    sync(x.device)
    ts = [timer(step) for _ in range(reps)]
    return statistics.median(ts), min(ts), max(ts)


def time_h2d(nbytes, reps=7):
    h = torch.empty(nbytes // 4, dtype=torch.float32).pin_memory()
    h.uniform_()
    d = torch.empty_like(h, device="cuda")
    d.copy_(h, non_blocking=True)
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        d.copy_(h, non_blocking=True)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1000)
    return statistics.median(ts)


def driver_version():
    try:
        import pynvml
        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else v
    except Exception as e:  # noqa: BLE001 - the driver version is informative only
        return f"unknown ({e})"


FIELDS = ["model", "batch", "fanouts", "layers", "in_dim", "hidden", "classes", "heads",
          "input_rows", "dst_per_layer", "src_per_layer", "edges_per_layer",
          "step_s", "step_min_s", "step_max_s", "reps"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="raw measurement CSV to write")
    ap.add_argument("--meta", help="JSON file for the environment (default: OUT with .json)")
    ap.add_argument("--nodes", type=int, default=2_400_000, help="random-graph size the batches are sampled from")
    ap.add_argument("--budget-s", type=float, default=150, help="stop starting new shapes after this many seconds")
    ap.add_argument("--max-shapes", type=int, default=400)
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small", action="store_true", help="tiny grid for a syntax check (CPU allowed)")
    args = ap.parse_args()

    if not torch.cuda.is_available() and not args.small:
        sys.exit("pyg_profile: no CUDA device visible to PyTorch (this script measures a GPU; --small checks it on the CPU)")
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    timer = Timer(dev.type == "cuda")
    torch.manual_seed(args.seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)

    models = ["sage", "gcn", "gat"]
    batches = [128, 256, 512, 1000, 2000, 4000]
    fanouts = [(10,), (10, 10), (5, 5, 5), (10, 10, 10), (15, 10, 5), (25, 10), (20, 15, 10)]
    in_dims = [64, 128, 256, 512]
    hiddens = [64, 128, 256]
    if args.small:
        batches, fanouts, in_dims, hiddens = [64, 128], [(5,), (5, 5)], [16, 32], [32]
    grid = list(itertools.product(models, batches, fanouts, in_dims, hiddens))
    rng = random.Random(args.seed)
    rng.shuffle(grid)
    # the reference shape first, for each model
    ref = [(m, 1000, (10, 10, 10), 128, 256) for m in models]
    grid = ref + [g for g in grid if g not in ref]
    grid = grid[: args.max_shapes]

    heads, classes = 4, 47
    rows = []
    t0 = time.time()
    for (kind, batch, fo, ind, hid) in grid:
        if time.time() - t0 > args.budget_s:
            break
        blocks = sample_blocks(batch, list(fo), args.nodes, gen, dev)
        L = len(fo)
        dims = [ind] + [hid] * (L - 1) + [classes]
        model = Net(kind, dims, heads).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        n0 = blocks[0][1]
        x = torch.randn(n0, ind, device=dev)
        y = torch.randint(0, classes, (batch,), device=dev)
        try:
            med, lo, hi = time_steps(model, opt, x, y, blocks, args.warm, args.reps, timer)
        except torch.OutOfMemoryError:
            print(f"skip {kind} b={batch} fo={fo}: out of GPU memory", flush=True)
            continue
        rows.append({
            "model": kind, "batch": batch, "fanouts": "-".join(map(str, fo)), "layers": L,
            "in_dim": ind, "hidden": hid, "classes": classes, "heads": heads if kind == "gat" else 1,
            "input_rows": n0,
            "dst_per_layer": "-".join(str(b[2]) for b in blocks),
            "src_per_layer": "-".join(str(b[1]) for b in blocks),
            "edges_per_layer": "-".join(str(b[0].shape[1]) for b in blocks),
            "step_s": f"{med:.6e}", "step_min_s": f"{lo:.6e}", "step_max_s": f"{hi:.6e}", "reps": args.reps,
        })
        print(f"{len(rows):4d} {kind:4s} b={batch:5d} fo={'-'.join(map(str, fo)):9s} in={ind:3d} hid={hid:3d} "
              f"rows={n0:8d} step={med*1e3:8.3f} ms", flush=True)
        del model, opt, x, y, blocks
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)

    meta = {"device": "cpu (syntax check, not a measurement)"}
    if dev.type == "cuda":
        # host-to-device copies of pinned buffers (a batch's input features)
        h2d = []
        for mb in [0.25, 1, 4, 16, 64, 256, 1024]:
            n = int(mb * (1 << 20))
            h2d.append({"bytes": n, "seconds": time_h2d(n)})
        props = torch.cuda.get_device_properties(0)
        meta = {
            "gpu": torch.cuda.get_device_name(0),
            "sm_count": props.multi_processor_count,
            "memory_bytes": props.total_memory,
            "driver": driver_version(),
            "h2d_pinned": h2d,
        }
    meta.update({
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "torch_geometric": __import__("torch_geometric").__version__,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "nodes": args.nodes,
        "warm": args.warm,
        "reps": args.reps,
        "shapes": len(rows),
        "wall_s": round(time.time() - t0, 1),
        "command": " ".join(sys.argv),
    })
    with open(args.meta or os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    print(f"pyg_profile: {len(rows)} shapes in {meta['wall_s']} s on {meta.get('gpu', 'cpu')}")


if __name__ == "__main__":
    main()

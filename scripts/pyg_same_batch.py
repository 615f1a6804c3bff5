#!/usr/bin/env python3
"""One GraphSAGE training step in PyTorch Geometric on exactly the batch outcore's GPU test timed.

engine/cuda's TestSAGEStepTime (OUTCORE_GPU_STEP=1 OUTCORE_GPU_STEP_DUMP=DIR)
writes its batch to DIR: batch.json, block<l>_indptr / block<l>_indices
(int32 CSR, destinations first among the sources), x (float32 input rows),
y (int32 seed labels). This script runs the same model (SAGEConv per block,
mean aggregation with root weight, ReLU + dropout 0.5 between layers,
128 -> 256 -> 256 -> 47, cross-entropy, Adam) on it and times, per step,
with CUDA events for the GPU parts: copying x into pinned memory (host),
the host-to-device copy of x, labels and blocks, and the step (forward +
loss + backward + Adam); medians over --reps after --warm warm-ups. Prints
one JSON object.

    python3 scripts/pyg_same_batch.py --dir /tmp/batch > pyg-same-batch.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pyg_common import BlockSAGE as SAGE  # noqa: E402




def load(d):
    with open(os.path.join(d, "batch.json")) as f:
        meta = json.load(f)
    blocks = []
    for l, lay in enumerate(meta["Layers"]):
        ptr = torch.from_numpy(np.fromfile(os.path.join(d, f"block{l}_indptr"), dtype=np.int32).astype(np.int64))
        idx = torch.from_numpy(np.fromfile(os.path.join(d, f"block{l}_indices"), dtype=np.int32).astype(np.int64))
        if ptr.numel() != lay["Dst"] + 1 or idx.numel() != lay["Edges"]:
            sys.exit(f"pyg_same_batch: block {l}: {ptr.numel()} pointers and {idx.numel()} indices, want {lay['Dst'] + 1} and {lay['Edges']}")
        dst = torch.arange(lay["Dst"]).repeat_interleave(ptr[1:] - ptr[:-1])
        blocks.append((torch.stack([idx, dst]), lay["Src"], lay["Dst"]))
    x = torch.from_numpy(np.fromfile(os.path.join(d, "x"), dtype=np.float32)).view(meta["Rows"], meta["Cols"])
    y = torch.from_numpy(np.fromfile(os.path.join(d, "y"), dtype=np.int32).astype(np.int64))
    return meta, blocks, x, y


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--classes", type=int, default=47)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warm", type=int, default=3)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("pyg_same_batch: no CUDA device visible to PyTorch")
    dev = torch.device("cuda")
    meta, blocks, x, y = load(args.dir)
    L = len(blocks)
    dims = [meta["Cols"]] + [args.hidden] * (L - 1) + [args.classes]
    torch.manual_seed(1)
    model = SAGE(dims).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    pinned = torch.empty_like(x).pin_memory()
    rec = {k: [] for k in ["pin_s", "h2d_s", "step_s", "total_s"]}
    for it in range(args.warm + args.reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        pinned.copy_(x)  # the rows into pinned memory (PyTorch's copy, on the host)
        t1 = time.perf_counter()
        a, b, c = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        a.record()
        xd = pinned.to(dev, non_blocking=True)
        yd = y.to(dev, non_blocking=True)
        bd = [(e.to(dev, non_blocking=True), ns, nd) for (e, ns, nd) in blocks]
        b.record()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xd, bd), yd)
        loss.backward()
        opt.step()
        c.record()
        c.synchronize()
        t2 = time.perf_counter()
        if it >= args.warm:
            rec["pin_s"].append(t1 - t0)
            rec["h2d_s"].append(a.elapsed_time(b) / 1000)
            rec["step_s"].append(b.elapsed_time(c) / 1000)
            rec["total_s"].append(t2 - t0)
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "torch_geometric": __import__("torch_geometric").__version__,
           "float32_matmul_precision": torch.get_float32_matmul_precision(),
           "batch": meta, "x_bytes": x.numel() * 4}
    for k, v in rec.items():
        out[k] = statistics.median(v)
        out[k + "_min"] = min(v)
    print(json.dumps(out, indent=1))
    print(f"same batch: rows={meta['Rows']} pin={out['pin_s']*1e3:.1f} ms h2d={out['h2d_s']*1e3:.2f} ms "
          f"step={out['step_s']*1e3:.2f} ms total={out['total_s']*1e3:.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""One training epoch of PyTorch Geometric GraphSAGE with memory-mapped features
(the PyG+ setup of the GNNDrive and Ginex papers) on an outcore dataset.

Reads an outcore dataset directory (docs/DESIGN.md §4: meta.json, indptr.bin
int64 in memory, indices.bin int64 and features.bin float32 memory-mapped,
labels.bin int32, train.bin int64), samples each mini-batch on the CPU
(scripts/pyg_common.py's sampler: PyG's NeighborLoader needs pyg-lib or
torch-sparse), gathers the input rows from the memory-mapped features (page
cache), copies them to the GPU and trains one step of SAGEConv layers
(blocks, outcore's layout) with Adam: the same batches' shapes as outcore's
samplers give.

--mem-budget-mib applies a memory limit to this process's own cgroup (v2)
once PyTorch, CUDA, the model and the in-memory topology (indptr, labels,
train ids) are loaded: it first asks the kernel to reclaim what it can
(memory.reclaim: the libraries' file pages), then sets memory.max =
memory.current + budget, so the budget covers what the epoch touches (page
cache of features and indices, batch buffers), as outcore's --mem-limit does
with the model step held outside it. Without the reclaim (its first
measurement, docs/benchmarks/gpu.md) ~1 GB of library pages padded the budget.
The dataset's pages are dropped from the page cache first (fadvise
DONTNEED), so the epoch pays for what it reads.

    python3 scripts/pyg_mmap_epoch.py --data DIR/datasets/medium --mem-budget-mib 256 > epoch.json

With --mem-budget-mib 0 it sets no limit itself: scripts/gpu-device-check.sh
instead starts it inside a cgroup whose memory.max is set before the
process starts, so the limit covers the whole process, PyTorch's and
CUDA's own memory included; memory_peak and memory_stat are still read.
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
from pyg_common import BlockSAGE as SAGE, sample_csc  # noqa: E402




def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def own_cgroup():
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return "/sys/fs/cgroup" + line.strip()[3:]
    return None


def read_int(path):
    with open(path) as f:
        v = f.read().strip()
    return None if v == "max" else int(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="outcore dataset directory (with meta.json)")
    ap.add_argument("--fanouts", default="10,10,10")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mem-budget-mib", type=float, default=0, help="memory limit on top of the loaded process (0 = none)")
    ap.add_argument("--max-batches", type=int, default=0, help="stop after this many batches (0 = the whole epoch)")
    ap.add_argument("--time-limit-s", type=float, default=0,
                    help="stop after this many seconds of the epoch; the output then says so (partial) and gives the batches done")
    ap.add_argument("--cpu-check", action="store_true", help="run on the CPU to check the script (no measurement)")
    args = ap.parse_args()
    dev = torch.device("cpu" if args.cpu_check else "cuda")
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("pyg_mmap_epoch: no CUDA device visible to PyTorch")
    t_start = time.perf_counter()
    with open(os.path.join(args.data, "meta.json")) as f:
        meta = json.load(f)
    N, D, C = meta["nodes"], meta["feature_dim"], meta["classes"]
    files = {k: os.path.join(args.data, k + ".bin") for k in ["indptr", "indices", "features", "labels", "train"]}
    for p in files.values():
        evict(p)
    indptr = torch.from_numpy(np.fromfile(files["indptr"], dtype=np.int64))
    indices_np = np.memmap(files["indices"], dtype=np.int64, mode="r")
    feats = np.memmap(files["features"], dtype=np.float32, mode="r", shape=(N, D))
    labels = torch.from_numpy(np.fromfile(files["labels"], dtype=np.int32).astype(np.int64))
    train = torch.from_numpy(np.fromfile(files["train"], dtype=np.int64))
    fanouts = [int(v) for v in args.fanouts.split(",")]
    torch.manual_seed(args.seed)
    dims = [D] + [args.hidden] * (len(fanouts) - 1) + [C]
    model = SAGE(dims).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    if dev.type == "cuda":
        torch.zeros(1, device=dev).sum().item()  # CUDA context up before the budget is set
    out = {"dataset": meta.get("name"), "nodes": N, "feature_dim": D, "classes": C, "train": int(train.numel()),
           "batch": args.batch, "fanouts": fanouts, "hidden": args.hidden, "setup_s": round(time.perf_counter() - t_start, 2),
           "sampler": "scripts/pyg_common.py sample_csc (CPU)", "features": "numpy memmap (page cache)",
           "indices": "numpy memmap (page cache)"}
    print(f"setup done in {time.perf_counter() - t_start:.2f} s", file=sys.stderr, flush=True)
    cg = own_cgroup()
    if args.mem_budget_mib > 0:
        if not cg or not os.path.exists(os.path.join(cg, "memory.max")):
            sys.exit(f"pyg_mmap_epoch: no cgroup v2 memory controller for this process ({cg})")
        # reclaim what can be reclaimed first (the CUDA and PyTorch libraries'
        # file pages), so the budget is not padded by pages the kernel would
        # hand to the dataset later (cgroup v2 memory.reclaim, Linux >= 5.19)
        reclaimed = False
        try:
            with open(os.path.join(cg, "memory.reclaim"), "w") as f:
                f.write(str(1 << 40))
        except OSError:
            pass  # EAGAIN once nothing more can be reclaimed: done
        else:
            reclaimed = True
        base = read_int(os.path.join(cg, "memory.current"))
        with open(os.path.join(cg, "memory.stat")) as f:
            st0 = dict(line.split() for line in f)
        out["memory_at_limit"] = {k: int(st0[k]) for k in ["anon", "file"] if k in st0}
        out["reclaim_attempted"] = True
        out["reclaim_completed"] = reclaimed
        limit = base + int(args.mem_budget_mib * (1 << 20))
        with open(os.path.join(cg, "memory.max"), "w") as f:
            f.write(str(limit))
        out.update({"cgroup": cg, "memory_current_at_limit": base, "memory_max": limit,
                    "budget_mib": args.mem_budget_mib})
    gen = torch.Generator().manual_seed(args.seed)
    perm = train[torch.randperm(train.numel(), generator=gen)]
    nb = (perm.numel() + args.batch - 1) // args.batch
    if args.max_batches:
        nb = min(nb, args.max_batches)
    rec = {k: [] for k in ["sample_s", "gather_s", "train_s"]}
    losses, correct, seen = [], 0, 0
    model.train()
    t_epoch = time.perf_counter()
    partial = False
    for b in range(nb):
        if args.time_limit_s and time.perf_counter() - t_epoch > args.time_limit_s:
            partial = True
            break
        seeds = perm[b * args.batch:(b + 1) * args.batch]
        t0 = time.perf_counter()
        n_id, blocks = sample_csc(indptr, _MMapIndex(indices_np), seeds, fanouts, gen)
        t1 = time.perf_counter()
        ids = n_id.numpy()
        x = torch.from_numpy(feats[ids])
        t2 = time.perf_counter()
        xd = x.to(dev, non_blocking=False)
        y = labels[seeds].to(dev)
        bd = [(e.to(dev), ns, nd) for (e, ns, nd) in blocks]
        opt.zero_grad(set_to_none=True)
        o = model(xd, bd)
        loss = F.cross_entropy(o, y)
        loss.backward()
        opt.step()
        losses.append(float(loss))  # synchronises
        correct += int((o.argmax(1) == y).sum())
        seen += int(y.numel())
        t3 = time.perf_counter()
        rec["sample_s"].append(t1 - t0)
        rec["gather_s"].append(t2 - t1)
        rec["train_s"].append(t3 - t2)
        # progress on stderr, so a run stopped from outside still tells
        # how far it got
        print(f"batch {b + 1}/{nb} at {time.perf_counter() - t_epoch:.2f} s: sample {t1 - t0:.3f} gather {t2 - t1:.3f} "
              f"train {t3 - t2:.3f} rows {ids.size}", file=sys.stderr, flush=True)
    epoch_s = time.perf_counter() - t_epoch
    done = len(rec["train_s"])
    out.update({"batches": nb, "batches_done": done, "partial": partial, "epoch_s": round(epoch_s, 3),
                "epoch_s_extrapolated": round(epoch_s * nb / max(done, 1), 3) if partial else None,
                "sample_s": round(sum(rec["sample_s"]), 3), "gather_s": round(sum(rec["gather_s"]), 3),
                "train_s": round(sum(rec["train_s"]), 3),
                "median_batch_s": round(statistics.median([a + b + c for a, b, c in zip(*rec.values())]), 4),
                "train_loss_last": losses[-1] if losses else None, "train_acc": correct / max(seen, 1)})
    if cg and os.path.exists(os.path.join(cg, "memory.peak")):
        out["memory_peak"] = read_int(os.path.join(cg, "memory.peak"))
    if cg and os.path.exists(os.path.join(cg, "memory.stat")):
        with open(os.path.join(cg, "memory.stat")) as f:
            st = dict(line.split() for line in f)
        out["memory_stat"] = {k: int(st[k]) for k in ["anon", "file", "pgmajfault"] if k in st}
    if dev.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(0)
    print(json.dumps(out, indent=1))


class _MMapIndex:
    """indices.bin read through the memory map: idx[t] gathers rows of the
    int64 array for a LongTensor t (only the pages touched are read)."""

    def __init__(self, arr):
        self.arr = arr

    def __getitem__(self, t):
        return torch.from_numpy(np.asarray(self.arr[t.numpy()]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch Geometric GraphSAGE with memory-mapped features (the papers' PyG+
setup), run by outcore as an external system.

For machines that have torch, torch_geometric and numpy; not run by `make
test` (which compiles it only). Register it with
examples/external/pyg-systems.json (copy the entry into the data directory's
systems.json, with "env" naming the Python environment if it is not the
system's): outcore then runs it in the grid's memory cgroup, drops the
dataset's page cache before it, samples it every second, and stores the
epochs it reports through the record protocol beside the built-ins'.

It reads the dataset directory's files (docs/API.md, "The dataset
directory's files"): indptr, labels and the splits into memory,
indices.bin and features.bin as numpy memory maps, so that feature rows
and neighbour lists come through the page cache inside outcore's memory
limit — PyG+ as GNNDrive and Ginex measure it. Sampling is
scripts/pyg_common.py's CPU sampler (outcore's block layout); the model is
its BlockSAGE, trained with Adam on the GPU when one is visible, else on
the CPU.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "scripts"))
import outcore_record  # noqa: E402
from pyg_common import BlockSAGE, sample_csc  # noqa: E402


class MMapIndex:
    """indices.bin through its memory map: idx[t] gathers the entries at the
    positions of a LongTensor t (only the pages touched are read)."""

    def __init__(self, arr):
        self.arr = arr

    def __getitem__(self, t):
        return torch.from_numpy(np.asarray(self.arr[t.numpy()]))


def proc_read_bytes():
    """This process's device reads so far (/proc/self/io read_bytes), or None."""
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("read_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def accuracy(model, dev, indptr, indices, feats, labels, nodes, fanouts, batch, gen):
    model.eval()
    right = 0
    with torch.no_grad():
        for b in range(0, nodes.numel(), batch):
            seeds = nodes[b:b + batch]
            n_id, blocks = sample_csc(indptr, indices, seeds, fanouts, gen)
            x = torch.from_numpy(feats[n_id.numpy()]).to(dev)
            o = model(x, [(e.to(dev), ns, nd) for (e, ns, nd) in blocks])
            right += int((o.argmax(1).cpu() == labels[seeds]).sum())
    model.train()
    return right / max(nodes.numel(), 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--fanouts", default="10,10,10", help="per layer, input layer first")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--outcore-dataset", required=True)
    ap.add_argument("--outcore-records", default=None)
    ap.add_argument("--outcore-scratch", default=None)
    a = ap.parse_args()

    dev = a.device
    if dev == "auto":
        dev = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(dev)
    out = outcore_record.Writer(path=a.outcore_records)
    t_start = time.perf_counter()
    d = a.outcore_dataset
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    n, dim, classes = meta["nodes"], meta["feature_dim"], meta["classes"]
    path = {k: os.path.join(d, k + ".bin") for k in ["indptr", "indices", "features", "labels", "train", "val", "test"]}
    indptr = torch.from_numpy(np.fromfile(path["indptr"], dtype="<i8"))
    indices = MMapIndex(np.memmap(path["indices"], dtype="<i8", mode="r"))
    feats = np.memmap(path["features"], dtype="<f4", mode="r", shape=(n, dim))
    labels = torch.from_numpy(np.fromfile(path["labels"], dtype="<i4").astype(np.int64))
    train = torch.from_numpy(np.fromfile(path["train"], dtype="<i8"))
    val = torch.from_numpy(np.fromfile(path["val"], dtype="<i8"))
    test = torch.from_numpy(np.fromfile(path["test"], dtype="<i8"))
    fanouts = [int(v) for v in a.fanouts.split(",")]
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    model = BlockSAGE([dim] + [a.hidden] * (len(fanouts) - 1) + [classes]).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    prepare_s = time.perf_counter() - t_start
    out.log("info", "pyg_mmap: %d nodes, %d dims, %d classes on %s, fanouts %s" % (n, dim, classes, dev, fanouts))
    if dev.type == "cpu":
        out.log("warn", "no CUDA device: the model step runs on the CPU")

    best = (-1, 0.0, 0.0)
    times = []
    row_bytes = 4 * dim
    for epoch in range(a.epochs):
        perm = train[torch.randperm(train.numel(), generator=gen)]
        stages = {"sample": 0.0, "extract": 0.0, "train": 0.0}
        rows = batches = seen = right = 0
        loss_sum = 0.0
        rb0 = proc_read_bytes()
        e0 = time.perf_counter()
        for b in range(0, perm.numel(), a.batch):
            seeds = perm[b:b + a.batch]
            t0 = time.perf_counter()
            n_id, blocks = sample_csc(indptr, indices, seeds, fanouts, gen)
            t1 = time.perf_counter()
            x = torch.from_numpy(feats[n_id.numpy()])
            t2 = time.perf_counter()
            y = labels[seeds].to(dev)
            opt.zero_grad(set_to_none=True)
            o = model(x.to(dev), [(e.to(dev), ns, nd) for (e, ns, nd) in blocks])
            loss = F.cross_entropy(o, y)
            loss.backward()
            opt.step()
            loss_sum += float(loss) * y.numel()  # synchronises
            right += int((o.argmax(1) == y).sum())
            seen += int(y.numel())
            t3 = time.perf_counter()
            stages["sample"] += t1 - t0
            stages["extract"] += t2 - t1
            stages["train"] += t3 - t2
            rows += int(n_id.numel())
            batches += 1
        epoch_s = time.perf_counter() - e0
        rb1 = proc_read_bytes()
        ev0 = time.perf_counter()
        val_acc = accuracy(model, dev, indptr, indices, feats, labels, val, fanouts, a.batch, gen)
        test_acc = accuracy(model, dev, indptr, indices, feats, labels, test, fanouts, a.batch, gen)
        eval_s = time.perf_counter() - ev0
        if best[0] < 0 or val_acc > best[1]:
            best = (epoch, val_acc, test_acc)
        times.append(epoch_s)
        fields = dict(stages=stages, batches=batches, bytes_needed=rows * row_bytes,
                      train_loss=loss_sum / max(seen, 1), train_acc=right / max(seen, 1),
                      val_acc=val_acc, test_acc=test_acc, eval_s=eval_s)
        if rb0 is not None and rb1 is not None:
            fields["bytes_read"] = rb1 - rb0
        out.epoch(epoch, epoch_s=epoch_s, **fields)
    out.summary(epochs=a.epochs, best_epoch=best[0], best_val_acc=best[1], test_acc=best[2],
                mean_epoch_s=sum(times) / max(len(times), 1), total_s=time.perf_counter() - t_start,
                prepare_s=prepare_s)
    out.close()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A tiny GNN trainer in plain Python, run by outcore as an external system.

Standard library only. It reads a dataset directory in outcore's format
(docs/API.md, "The dataset directory's files"), samples up to --fanout
in-neighbours of each training node, and trains a softmax classifier on
[own features, mean of the sampled neighbours' features] with SGD. Feature
rows and neighbour lists are read from the files with pread on demand, as
an out-of-core loader would; the whole of indptr, the labels and the splits
are held in memory. Each epoch goes to outcore through the record protocol
(scripts/outcore_record.py).

outcore runs it with the options the registry declares (--epochs, --lr,
--fanout, --train-limit, --seed) and the paths it hands every external
program: --outcore-dataset=DIR --outcore-records=PATH --outcore-scratch=DIR.
examples/external/systems.json registers it.
"""

import argparse
import array
import json
import math
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import outcore_record  # noqa: E402


def read_array(path, typecode):
    """A whole little-endian binary file as an array."""
    a = array.array(typecode)
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return a


class Dataset:
    def __init__(self, d):
        with open(os.path.join(d, "meta.json")) as f:
            self.meta = json.load(f)
        m = self.meta
        if m.get("format") != 1:
            raise SystemExit("%s: format %r, this program reads format 1" % (d, m.get("format")))
        want = {"indptr": "int64", "indices": "int64", "features": "float32", "labels": "int32", "splits": "int64"}
        if m.get("dtypes") != want:
            raise SystemExit("%s: dtypes %r, want %r" % (d, m.get("dtypes"), want))
        self.nodes, self.dim, self.classes = m["nodes"], m["feature_dim"], m["classes"]
        self.indptr = read_array(os.path.join(d, "indptr.bin"), "q")
        self.labels = read_array(os.path.join(d, "labels.bin"), "i")
        self.train = read_array(os.path.join(d, "train.bin"), "q")
        self.val = read_array(os.path.join(d, "val.bin"), "q")
        self.test = read_array(os.path.join(d, "test.bin"), "q")
        self.features_fd = os.open(os.path.join(d, "features.bin"), os.O_RDONLY)
        self.indices_fd = os.open(os.path.join(d, "indices.bin"), os.O_RDONLY)
        self.row_bytes = 4 * self.dim
        self.row = struct.Struct("<%df" % self.dim)
        self.bytes_read = 0
        self.rows_read = 0

    def features(self, v):
        b = os.pread(self.features_fd, self.row_bytes, v * self.row_bytes)
        self.bytes_read += len(b)
        self.rows_read += 1
        return self.row.unpack(b)

    def in_neighbours(self, v):
        lo, hi = self.indptr[v], self.indptr[v + 1]
        if hi == lo:
            return ()
        b = os.pread(self.indices_fd, 8 * (hi - lo), 8 * lo)
        self.bytes_read += len(b)
        return struct.unpack("<%dq" % (hi - lo), b)


def embed(ds, v, fanout, rng):
    """[x_v, mean of up to fanout sampled in-neighbours' x] and the seconds
    spent sampling and loading."""
    t0 = time.perf_counter()
    nb = ds.in_neighbours(v)
    if len(nb) > fanout:
        nb = rng.sample(nb, fanout)
    t1 = time.perf_counter()
    own = ds.features(v)
    agg = [0.0] * ds.dim
    for u in nb:
        for i, x in enumerate(ds.features(u)):
            agg[i] += x
    if nb:
        agg = [a / len(nb) for a in agg]
    t2 = time.perf_counter()
    return list(own) + agg + [1.0], t1 - t0, t2 - t1


def softmax(z):
    m = max(z)
    e = [math.exp(x - m) for x in z]
    s = sum(e)
    return [x / s for x in e]


def scores(w, h):
    return [sum(wi * hi for wi, hi in zip(row, h)) for row in w]


def evaluate(ds, w, nodes, fanout, rng):
    right = 0
    for v in nodes:
        h, _, _ = embed(ds, v, fanout, rng)
        z = scores(w, h)
        right += max(range(len(z)), key=z.__getitem__) == ds.labels[v]
    return right / max(len(nodes), 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--fanout", type=int, default=5)
    p.add_argument("--train-limit", "--train_limit", dest="train_limit", type=int, default=0,
                   help="train on at most this many training nodes an epoch (0: all)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--outcore-dataset", required=True)
    p.add_argument("--outcore-records", default=None)
    p.add_argument("--outcore-scratch", default=None)
    a = p.parse_args()

    start = time.perf_counter()
    rng = random.Random(a.seed)
    out = outcore_record.Writer(path=a.outcore_records)
    t0 = time.perf_counter()
    ds = Dataset(a.outcore_dataset)
    prepare_s = time.perf_counter() - t0
    out.log("info", "tiny_sgd: %d nodes, %d dims, %d classes, %d train nodes" % (ds.nodes, ds.dim, ds.classes, len(ds.train)))

    width = 2 * ds.dim + 1
    w = [[0.0] * width for _ in range(ds.classes)]
    train = list(ds.train)
    val = list(ds.val)[: max(a.train_limit // 2, 1) if a.train_limit else len(ds.val)]
    test = list(ds.test)[: len(val)]
    best = (-1, 0.0, 0.0)  # epoch, val_acc, test_acc
    epoch_times = []
    for epoch in range(a.epochs):
        rng.shuffle(train)
        nodes = train[: a.train_limit] if a.train_limit else train
        read0, rows0 = ds.bytes_read, ds.rows_read
        sample_s = load_s = train_s = 0.0
        loss = 0.0
        right = 0
        e0 = time.perf_counter()
        for v in nodes:
            h, s, l = embed(ds, v, a.fanout, rng)
            sample_s += s
            load_s += l
            t = time.perf_counter()
            y = ds.labels[v]
            pr = softmax(scores(w, h))
            loss -= math.log(max(pr[y], 1e-12))
            right += max(range(len(pr)), key=pr.__getitem__) == y
            for c in range(ds.classes):
                g = a.lr * (pr[c] - (1.0 if c == y else 0.0))
                if g:
                    row = w[c]
                    for i in range(width):
                        row[i] -= g * h[i]
            train_s += time.perf_counter() - t
        epoch_s = time.perf_counter() - e0
        bytes_read, rows = ds.bytes_read - read0, ds.rows_read - rows0
        ev0 = time.perf_counter()
        val_acc = evaluate(ds, w, val, a.fanout, rng)
        test_acc = evaluate(ds, w, test, a.fanout, rng)
        eval_s = time.perf_counter() - ev0
        if val_acc > best[1] or best[0] < 0:
            best = (epoch, val_acc, test_acc)
        epoch_times.append(epoch_s)
        out.epoch(epoch, epoch_s=epoch_s,
                  stages={"sample": sample_s, "extract": load_s, "train": train_s},
                  wall={"sample": sample_s, "load": load_s, "train": train_s,
                        "stall": max(epoch_s - sample_s - load_s - train_s, 0.0)},
                  batches=len(nodes), bytes_read=bytes_read, bytes_needed=rows * ds.row_bytes,
                  rows_from_device=rows, train_loss=loss / max(len(nodes), 1),
                  train_acc=right / max(len(nodes), 1), val_acc=val_acc, test_acc=test_acc,
                  eval_s=eval_s, counters={"preads": rows}, extra={"lr": a.lr})
    out.summary(epochs=a.epochs, best_epoch=best[0], best_val_acc=best[1], test_acc=best[2],
                mean_epoch_s=sum(epoch_times) / max(len(epoch_times), 1),
                total_s=time.perf_counter() - start, prepare_s=prepare_s)
    out.close()


if __name__ == "__main__":
    main()

"""Shared parts of outcore's PyTorch Geometric scripts (scripts/pyg_*.py).

GraphSAGE on outcore's blocks (BlockSAGE), and a neighbour sampler that
needs neither pyg-lib nor torch-sparse (PyG's
NeighborLoader needs one of them), used only when neither is installed; the
scripts say which sampler ran.
"""
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv


class BlockSAGE(torch.nn.Module):
    """GraphSAGE over outcore's block layout: one SAGEConv per bipartite block
    (destinations first among the sources), ReLU and dropout 0.5 between
    layers; blocks are (edge_index, sources, destinations)."""

    def __init__(self, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(SAGEConv(dims[i], dims[i + 1]) for i in range(len(dims) - 1))

    def forward(self, x, blocks):
        for l, (ei, ns, nd) in enumerate(blocks):
            x = self.convs[l]((x, x[:nd]), ei, size=(ns, nd))
            if l < len(self.convs) - 1:
                x = F.dropout(F.relu(x), 0.5, self.training)
        return x


def have_pyg_sampler():
    """True when PyG's NeighborLoader can sample (pyg-lib or torch-sparse present)."""
    import torch_geometric.typing as t
    return bool(getattr(t, "WITH_PYG_LIB", False) or getattr(t, "WITH_TORCH_SPARSE", False))


def sample_csc(indptr, indices, seeds, fanouts, gen=None):
    """Uniform neighbour sampling on a CSC graph (in-neighbours of v are
    indices[indptr[v]:indptr[v+1]]), outcore's block layout.

    Returns (n_id, blocks) with blocks first layer first, each
    (edge_index[2,E] local (src,dst), n_src, n_dst); n_id are the global ids
    of blocks[0]'s sources, the batch's seeds first. A destination with more
    than `fanout` in-neighbours draws `fanout` of them without replacement
    (the fo smallest of random keys per row; with replacement above 128
    in-neighbours); fewer: all of them.
    """
    dst = seeds
    blocks = []
    for fo in reversed(fanouts):
        nd = dst.numel()
        start, end = indptr[dst], indptr[dst + 1]
        deg = end - start
        take = torch.clamp(deg, max=fo)
        # offsets: rows with deg <= fo take all; rows with deg <= CAP draw fo
        # distinct offsets (the fo smallest of deg random keys); rows with
        # more in-neighbours draw fo offsets with replacement (duplicates are
        # rare there; bounded memory)
        CAP = 128
        cols = max(fo, 1)
        off = torch.arange(cols).expand(nd, -1).clone()
        mid = (deg > fo) & (deg <= CAP)
        if bool(mid.any()):
            dm = deg[mid]
            w = int(dm.max())
            keys = torch.rand(int(mid.sum()), w, generator=gen)
            keys[torch.arange(w).expand(keys.shape[0], -1) >= dm.unsqueeze(1)] = 2.0
            off[mid] = keys.topk(fo, dim=1, largest=False).indices
        big = deg > CAP
        if bool(big.any()):
            r = torch.rand(int(big.sum()), fo, generator=gen)
            off[big] = (r * deg[big].unsqueeze(1)).long()
        mask = torch.arange(off.shape[1]).expand(nd, -1) < take.unsqueeze(1)
        rows = torch.arange(nd).unsqueeze(1).expand_as(off)[mask]
        nbr = indices[(start.unsqueeze(1) + off)[mask]]
        allids = torch.cat([dst, nbr])
        uniq, inv = torch.unique(allids, return_inverse=True)
        local = torch.full((uniq.numel(),), -1, dtype=torch.long)
        local[inv[:nd]] = torch.arange(nd)
        newmask = local < 0
        nnew = int(newmask.sum())
        local[newmask] = torch.arange(nd, nd + nnew)
        src_ids = torch.empty(nd + nnew, dtype=torch.long)
        src_ids[local] = uniq
        blocks.append((torch.stack([local[inv[nd:]], rows]), nd + nnew, nd))
        dst = src_ids
    blocks.reverse()
    return dst, blocks


def random_csc(nodes, degree, seed):
    """A random directed graph in CSC form: every node has `degree` uniform
    random in-neighbours (no self loops are removed; the sampler does not care)."""
    g = torch.Generator().manual_seed(seed)
    indptr = torch.arange(0, (nodes + 1) * degree, degree, dtype=torch.long)
    indices = torch.randint(0, nodes, (nodes * degree,), generator=g, dtype=torch.long)
    return indptr, indices


class Stopwatch:
    def __init__(self):
        self.t = {}

    def add(self, name, dt):
        self.t[name] = self.t.get(name, 0.0) + dt

    def time(self, name):
        sw = self

        class _C:
            def __enter__(self):
                self.t0 = time.perf_counter()

            def __exit__(self, *a):
                sw.add(name, time.perf_counter() - self.t0)
        return _C()

package cache

// Ginex §3.1–3.2 (Fig. 10): the static neighbour cache. Built once, offline,
// from the graph: nodes are ranked by the ratio of out-neighbours (how often
// their in-neighbour list is read while sampling) to in-neighbours (what
// caching the list costs), the AliGraph-style score, and their in-neighbour
// lists are taken in that order until the byte budget is spent. Lookup is by
// direct addressing: address_table[v] is the index of v's entry in
// cache_array, or -1; the entry holds the neighbour count followed by the
// neighbour ids. The cache is dumped to a file and loaded at the start of
// every superbatch sample stage.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"outcore/internal/osutil"
)

// NeighborCache is Ginex's static neighbour cache.
type NeighborCache struct {
	address []int64 // per node: index of its entry in array, or -1
	array   []int64 // entries: count, then count neighbour ids
	cached  int
}

// NeighborScore is the Ginex/AliGraph importance of node v:
// out-degree / in-degree (0 for a node without in-neighbours).
func NeighborScore(outDeg, inDeg int64) float64 {
	if inDeg <= 0 {
		return 0
	}
	return float64(outDeg) / float64(inDeg)
}

// NeighborCacheEntries is how many int64 cells of neighbour data a cache of
// budget bytes holds after its address table (8 bytes per node); 0 when the
// table alone exceeds the budget.
func NeighborCacheEntries(budget, numNodes int64) int64 {
	rest := budget - 8*numNodes
	if rest <= 0 {
		return 0
	}
	return rest / 8
}

// BuildNeighborCache selects nodes by NeighborScore (highest first) and
// caches their in-neighbour lists until the budget is spent, stopping at the
// first list that does not fit, as Ginex does. indptr is the CSC pointer
// array (len N+1), outDeg the out-degree of every node, and read fills dst
// with indices[start:start+len(dst)].
func BuildNeighborCache(indptr, outDeg []int64, budget int64, read func(start int64, dst []int64) error) (*NeighborCache, error) {
	n := int64(len(indptr) - 1)
	if n <= 0 || int64(len(outDeg)) != n {
		return nil, fmt.Errorf("cache: neighbour cache: indptr of %d and out-degrees of %d do not describe one graph", len(indptr), len(outDeg))
	}
	cells := NeighborCacheEntries(budget, n)
	order := make([]int32, 0, n)
	for v := int64(0); v < n; v++ {
		if indptr[v+1] > indptr[v] {
			order = append(order, int32(v))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		sa := NeighborScore(outDeg[a], indptr[a+1]-indptr[a])
		sb := NeighborScore(outDeg[b], indptr[b+1]-indptr[b])
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	var used int64
	k := 0
	for ; k < len(order); k++ {
		v := order[k]
		need := indptr[v+1] - indptr[v] + 1
		if used+need > cells {
			break
		}
		used += need
	}
	chosen := order[:k]
	nc := &NeighborCache{address: make([]int64, n), array: make([]int64, used), cached: k}
	for i := range nc.address {
		nc.address[i] = -1
	}
	// Entries are laid out in score order; lists are read in node order so
	// the reads of indices sweep the file once.
	var off int64
	for _, v := range chosen {
		nc.address[v] = off
		off += indptr[v+1] - indptr[v] + 1
	}
	byID := slices.Clone(chosen)
	slices.Sort(byID)
	for _, v := range byID {
		e := nc.address[v]
		deg := indptr[v+1] - indptr[v]
		nc.array[e] = deg
		if err := read(indptr[v], nc.array[e+1:e+1+deg]); err != nil {
			return nil, fmt.Errorf("cache: neighbour cache: read neighbours of node %d: %w", v, err)
		}
	}
	return nc, nil
}

// Neighbors returns v's cached in-neighbours (aliasing the cache) and true,
// or nil and false on a miss (Fig. 10(b)).
func (nc *NeighborCache) Neighbors(v int64) ([]int64, bool) {
	e := nc.address[v]
	if e < 0 {
		return nil, false
	}
	deg := nc.array[e]
	return nc.array[e+1 : e+1+deg : e+1+deg], true
}

// Cached is the number of nodes whose lists are cached.
func (nc *NeighborCache) Cached() int { return nc.cached }

// Nodes is the number of nodes of the graph.
func (nc *NeighborCache) Nodes() int64 { return int64(len(nc.address)) }

// Bytes is the memory the cache holds.
func (nc *NeighborCache) Bytes() int64 { return int64(len(nc.address))*8 + int64(len(nc.array))*8 }

var neighborCacheMagic = [8]byte{'O', 'C', 'N', 'C', 'A', 'C', 'H', '1'}

// ErrBadNeighborCacheFile marks a neighbour-cache file that is not one.
var ErrBadNeighborCacheFile = errors.New("cache: not a neighbour-cache file")

// WriteFile dumps the cache to path (Ginex saves it to SSD after building).
func (nc *NeighborCache) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cache: write neighbour cache: %w", err)
	}
	// Written back and dropped from the page cache as it goes, and synced:
	// the file is as large as the cache, and its dirty pages, charged to
	// the run's memory cgroup beside the cache itself, cannot be reclaimed
	// at once when the cgroup fills up.
	sw := osutil.NewSeqWriter(f)
	w := bufio.NewWriterSize(sw, 1<<20)
	hdr := make([]byte, 32)
	copy(hdr, neighborCacheMagic[:])
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(nc.address)))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(len(nc.array)))
	binary.LittleEndian.PutUint64(hdr[24:], uint64(nc.cached))
	_, err = w.Write(hdr)
	if err == nil {
		_, err = w.Write(osutil.Bytes(nc.address))
	}
	if err == nil {
		_, err = w.Write(osutil.Bytes(nc.array))
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := sw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cache: write neighbour cache %s: %w", path, err)
	}
	return nil
}

// ReadNeighborCacheFile loads a cache written by WriteFile.
func ReadNeighborCacheFile(path string) (*NeighborCache, error) {
	return ReadNeighborCacheFileInto(path, nil)
}

// neighborCacheReadChunk is how much of a neighbour-cache file one read
// takes (and drops from the page cache after).
const neighborCacheReadChunk = 8 << 20

// ReadNeighborCacheFileInto is ReadNeighborCacheFile with the cache's
// arrays obtained from alloc (e.g. memory outside the Go heap, which the
// caller frees when done with the cache); nil alloc uses make. The file's
// pages are dropped from the page cache as they are read.
func ReadNeighborCacheFileInto(path string, alloc func(n int) ([]int64, error)) (*NeighborCache, error) {
	if alloc == nil {
		alloc = func(n int) ([]int64, error) { return make([]int64, n), nil }
	}
	// One scan that drops what it has read from the page cache as it goes:
	// the file is as large as the cache it fills, and its pages, charged to
	// the run's memory cgroup beside the cache itself, would double it for
	// the time of the read.
	r, size, err := osutil.OpenSeq(path)
	if err != nil {
		return nil, fmt.Errorf("cache: read neighbour cache: %w", err)
	}
	defer r.Close()
	hdr := make([]byte, 32)
	if err := r.ReadFull(hdr); err != nil || [8]byte(hdr[:8]) != neighborCacheMagic {
		return nil, fmt.Errorf("cache: read %s: %w", path, ErrBadNeighborCacheFile)
	}
	n := binary.LittleEndian.Uint64(hdr[8:])
	cells := binary.LittleEndian.Uint64(hdr[16:])
	cached := binary.LittleEndian.Uint64(hdr[24:])
	if uint64(size) != 32+8*(n+cells) {
		return nil, fmt.Errorf("cache: read %s: size %d does not match header: %w", path, size, ErrBadNeighborCacheFile)
	}
	nc := &NeighborCache{cached: int(cached)}
	if nc.address, err = alloc(int(n)); err != nil {
		return nil, fmt.Errorf("cache: read neighbour cache %s: %w", path, err)
	}
	if nc.array, err = alloc(int(cells)); err != nil {
		return nil, fmt.Errorf("cache: read neighbour cache %s: %w", path, err)
	}
	for _, b := range [][]byte{osutil.Bytes(nc.address), osutil.Bytes(nc.array)} {
		for len(b) > 0 {
			k := min(len(b), neighborCacheReadChunk)
			if err := r.ReadFull(b[:k]); err != nil {
				return nil, fmt.Errorf("cache: read neighbour cache: %w", err)
			}
			b = b[k:]
		}
	}
	return nc, nil
}

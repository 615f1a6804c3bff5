package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"outcore/engine/dataset"
)

// dataStatsCmd is `outcore data stats NAME`: the structure of a dataset,
// generated or imported, in the terms the papers' datasets are described
// by (docs/benchmarks/dataset.md compares the presets with them).
func dataStatsCmd() *Command {
	var opt dataset.StatsOptions
	fanouts := intList{10, 10, 10}
	cmd := datasetCmd("stats", "NAME [--batch N] [--fanout 10,10,10] [--json]", "structure of a dataset: degrees, homophily, clustering, communities, batch reach",
		func(fs *flag.FlagSet) {
			fs.IntVar(&opt.BatchSize, "batch", 1000, "mini-batch size (seeds) whose reach is measured")
			fs.Var(&fanouts, "fanout", "neighbours sampled per hop, seeds' hop first; -1 = all")
			fs.IntVar(&opt.Batches, "batches", 8, "mini-batches sampled")
			fs.IntVar(&opt.ClusteringSamples, "clustering-samples", 2000, "nodes whose local clustering is averaged (all when the graph has no more)")
			fs.IntVar(&opt.MaxNeighbourhood, "max-neighbourhood", 2000, "larger neighbourhoods are subsampled to this many nodes for clustering")
			fs.Uint64Var(&opt.Seed, "seed", 1, "seed of the samples")
		},
		func(s Streams, dir, name string, asJSON bool) error {
			if opt.BatchSize < 1 || opt.Batches < 1 || opt.ClusteringSamples < 1 || opt.MaxNeighbourhood < 2 || len(fanouts) == 0 {
				return usagef("--batch, --batches and --clustering-samples must be ≥ 1, --max-neighbourhood ≥ 2, --fanout non-empty")
			}
			opt.Fanouts = fanouts
			began := time.Now()
			st, err := dataset.ComputeStats(dir, opt)
			if err != nil {
				return fmt.Errorf("stats %s: %w", name, err)
			}
			if asJSON {
				return writeJSON(s.Out, st)
			}
			printStats(s.Out, st, time.Since(began))
			return nil
		})
	cmd.Long = "Measures a dataset's structure: node and edge counts, in- and out-degree percentiles, edge\n" +
		"homophily, average clustering of the undirected graph (sampled nodes), label class (community)\n" +
		"sizes, how close neighbours' ids are, and the share of nodes one mini-batch touches (seeds from\n" +
		"the train split, uniform sampling without replacement as the trainer does). Memory is O(nodes):\n" +
		"indptr, labels and out-degrees, never the edges or the features."
	return cmd
}

func printStats(w io.Writer, st *dataset.Stats, took time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "dataset\t%s (%.1f s)\n", st.Name, took.Seconds())
	dir := "directed"
	if st.Undirected {
		dir = "undirected, both directions stored"
	}
	fmt.Fprintf(tw, "nodes / edges\t%d / %d (%s)\n", st.Nodes, st.Edges, dir)
	deg := func(label string, d dataset.DegreeStats) {
		fmt.Fprintf(tw, "%s\tmean %.2f; min %d, p25 %d, median %d, p75 %d, p90 %d, p99 %d, max %d; top 1%% of nodes hold %.1f%% of edges\n",
			label, d.Mean, d.Min, d.P25, d.P50, d.P75, d.P90, d.P99, d.Max, 100*d.Top1Share)
	}
	deg("in-degree", st.InDegree)
	deg("out-degree", st.OutDegree)
	fmt.Fprintf(tw, "below fanout\t%.1f%% of nodes have fewer in-neighbours than %d\n", 100*st.BelowFanout, st.Batch.Fanouts[0])
	if st.EdgeHomophily != nil {
		fmt.Fprintf(tw, "edge homophily\t%.4f\n", *st.EdgeHomophily)
	} else {
		fmt.Fprintf(tw, "edge homophily\tn/a (no edge joins two labeled nodes)\n")
	}
	how := fmt.Sprintf("over %d sampled nodes", st.ClusteringNodes)
	if st.ClusteringExact {
		how = "over every node"
	}
	fmt.Fprintf(tw, "clustering\t%.4f (average local coefficient of the undirected graph, %s)\n", st.Clustering, how)
	fmt.Fprintf(tw, "id locality\tmedian neighbour id gap %.4f × nodes (≈ 0.29 for scattered ids)\n", st.IDDistanceP50)
	c := st.Communities
	if c.Count > 0 {
		fmt.Fprintf(tw, "communities\t%d label classes over %d labeled nodes: largest %d (%.1f%%), median %d, smallest %d; largest tenth hold %.1f%%\n",
			c.Count, c.Labeled, c.Largest, 100*c.LargestShare, c.Median, c.Smallest, 100*c.Top10Share)
	} else {
		fmt.Fprintf(tw, "communities\tno labeled nodes\n")
	}
	b := st.Batch
	fans := make([]string, len(b.Fanouts))
	for i, f := range b.Fanouts {
		fans[i] = fmt.Sprint(f)
	}
	fmt.Fprintf(tw, "batch reach\t%.2f%% of nodes (%.0f) per batch of %d seeds from %s at fanout %s (%d batches: %.2f–%.2f%%)\n",
		100*b.MeanShare, b.MeanNodes, b.BatchSize, b.SeedsFrom, strings.Join(fans, ","), b.Batches, 100*b.MinShare, 100*b.MaxShare)
	tw.Flush()
}

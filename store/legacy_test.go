package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
	"outcore/store/storetest"
)

// TestLegacyEpochsAfterMigration opens a database written before metrics
// version 2: the migration keeps its epochs, which come back as version 1
// with the fields added since at 0 and their old read_amplification; new
// epochs of the same run are version 2; the epochs CSV leaves the
// unmeasured cells empty and keeps the old ratio as
// bytes_read_per_byte_needed, never as read_amplification.
func TestLegacyEpochsAfterMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	expID, runID, err := storetest.LegacyDatabase(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatalf("open and migrate a version-1 database: %v", err)
	}
	defer s.Close()
	eps, err := s.Epochs(ctx, runID)
	if err != nil || len(eps) != 3 {
		t.Fatalf("epochs %d, %v", len(eps), err)
	}
	for _, e := range eps {
		if e.MetricsVersion != 1 || e.FeatureBytesRead != 0 || e.RowsFromDevice != 0 || e.SampleBusyS != 0 ||
			e.ReadAmplification != 3 || e.BytesRead != 3<<20 || e.Tiers["device"].Hits != 600 {
			t.Fatalf("legacy epoch %d: %+v", e.Epoch, e.EpochRecord)
		}
	}
	// A version-2 epoch next to them keeps its fields.
	rec := storetest.Epoch(3, 2)
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.InsertEpoch(runID, &rec) }); err != nil {
		t.Fatal(err)
	}
	eps, _ = s.Epochs(ctx, runID)
	if got := eps[3].EpochRecord; got.MetricsVersion != metrics.EpochMetricsVersion || got.FeatureBytesRead != rec.FeatureBytesRead ||
		got.TopologyBytesRead != rec.TopologyBytesRead || got.RowsFromDevice != 600 || got.ExtractWaitS != rec.ExtractWaitS {
		t.Fatalf("version-2 epoch read back as %+v", got)
	}
	// A record without metrics_version (an old child) is stored as 1.
	old := storetest.LegacyEpoch(4, 2)
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.InsertEpoch(runID, &old) }); err != nil {
		t.Fatal(err)
	}
	eps, _ = s.Epochs(ctx, runID)
	if eps[4].MetricsVersion != 1 {
		t.Fatalf("record without metrics_version stored as version %d", eps[4].MetricsVersion)
	}

	var buf bytes.Buffer
	if err := s.ExportCSV(ctx, &buf, expID, store.ExportEpochs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 6 {
		t.Fatalf("%d CSV lines, %v", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, c := range []string{"metrics_version", "feature_bytes_read", "topology_bytes_read", "rows_from_device",
		"rows_shared_in_flight", "read_amplification", "bytes_read_per_byte_needed", "sample_busy_s", "sample_wait_s",
		"extract_busy_s", "extract_wait_s", "wall_sample_s", "wall_load_s", "wall_train_s", "wall_stall_s"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("no column %s in %v", c, recs[0])
		}
	}
	legacy, current := recs[1], recs[4]
	if legacy[col["metrics_version"]] != "1" || legacy[col["read_amplification"]] != "" || legacy[col["feature_bytes_read"]] != "" ||
		legacy[col["extract_busy_s"]] != "" || legacy[col["bytes_read_per_byte_needed"]] != "3" || legacy[col["wall_train_s"]] != "" {
		t.Errorf("legacy epoch row %v", legacy)
	}
	if current[col["metrics_version"]] != strconv.Itoa(metrics.EpochMetricsVersion) || current[col["wall_train_s"]] == "" || current[col["read_amplification"]] != "3" ||
		current[col["feature_bytes_read"]] != "230400" || current[col["rows_from_device"]] != "600" || current[col["bytes_read_per_byte_needed"]] != "3" {
		t.Errorf("current epoch row %v", current)
	}
}

-- 0014_run_summary_json: a run's measurements are keys of its summary
-- record (summary_json: the child's metrics.SummaryRecord, with the
-- measurements the runner and the store decided written over it), read
-- through engine/metrics/fields.Runs (docs/ARCHITECTURE.md "Adding a
-- metric"). A run metric added there needs no column and no migration.
--
-- Every run's measurement columns are written into its summary under
-- their record keys (real numbers with 17 significant digits, which read
-- back exactly; NULLs remove the key, as the store's own patch does: a
-- run that trained no model has no best_val_acc). A run without a summary
-- gets one holding only these; a run with none of them keeps NULL.
--
-- Columns kept, as copies the store writes with the summary, because SQL
-- filters, sorts or aggregates them: mean_epoch_s, best_val_acc and
-- test_acc (the run conditions of store/conds.go, report/filter.go's
-- epoch_s, the comparison's sums in store/compare.go) and
-- peak_cgroup_bytes (store/compare.go's mean peak). Dropped, read from the
-- summary only: total_s and peak_rss_bytes (no SQL reads them).
UPDATE runs SET summary_json = nullif(json_patch(
    CASE WHEN json_valid(summary_json) THEN summary_json ELSE '{}' END,
    json_object(
        'mean_epoch_s', CASE WHEN mean_epoch_s IS NOT NULL THEN json(printf('%!.17g', mean_epoch_s)) END,
        'best_val_acc', CASE WHEN best_val_acc IS NOT NULL THEN json(printf('%!.17g', best_val_acc)) END,
        'test_acc', CASE WHEN test_acc IS NOT NULL THEN json(printf('%!.17g', test_acc)) END,
        'total_s', CASE WHEN total_s IS NOT NULL THEN json(printf('%!.17g', total_s)) END,
        'peak_rss_bytes', peak_rss_bytes,
        'peak_cgroup_bytes', peak_cgroup_bytes)), '{}')
WHERE summary_json IS NOT NULL OR mean_epoch_s IS NOT NULL OR best_val_acc IS NOT NULL OR test_acc IS NOT NULL
    OR total_s IS NOT NULL OR peak_rss_bytes IS NOT NULL OR peak_cgroup_bytes IS NOT NULL;

ALTER TABLE runs DROP COLUMN total_s;
ALTER TABLE runs DROP COLUMN peak_rss_bytes;

package web

import "testing"

// TestStudyValue: a study table writes its metric in the metric's unit.
func TestStudyValue(t *testing.T) {
	for _, c := range []struct {
		metric string
		x      float64
		want   string
	}{
		{"epoch_s", 12.345, "12.3 s"},
		{"epoch_no_sample_s", 3, "3.0 s"},
		{"hit_ratio", 0.4567, "45.7 %"},
		{"feature_bytes_read", 3 << 20, "3MiB"},
		{"rows_from_device", 1234567, "1,234,567"},
		{"counter_io_requests", 98765.4, "98,765"},
		{"feature_disk_blowup", 0.56, "0.560"},  // a run field (DiskGNN Fig. 12)
		{"feature_disk_bytes", 5 << 20, "5MiB"}, // a run field in bytes
	} {
		if got := studyValue(c.metric, c.x); got != c.want {
			t.Errorf("studyValue(%s, %g) = %q, want %q", c.metric, c.x, got, c.want)
		}
	}
}

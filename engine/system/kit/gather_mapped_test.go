package kit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"outcore/engine/metrics"
	"outcore/internal/osutil"
)

// TestGatherMappedMeasuresFaults gathers rows of a cold memory-mapped file
// (PyG+'s gather) and checks what it measured: the pages its threads
// faulted in (exact bytes), the checked rows that came from the device,
// and nothing read on a second, resident pass.
func TestGatherMappedMeasuresFaults(t *testing.T) {
	ps := int64(os.Getpagesize())
	const rb = 256
	rows := 64 * ps / rb
	data := make([]byte, rows*rb)
	for i := range data {
		data[i] = byte(i * 31)
	}
	p := filepath.Join(t.TempDir(), "features.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Sync()
	osutil.DropCache(f)
	f.Close()
	m, err := osutil.MapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	perPage := ps / rb
	// Two rows of each of pages 0, 10, 20, 30: four pages, eight rows.
	var ids []int64
	for _, pg := range []int64{0, 10, 20, 30} {
		ids = append(ids, pg*perPage, pg*perPage+1)
	}
	check := make([]bool, len(ids))
	for i := range check {
		check[i] = true
	}
	dst := make([]byte, len(ids)*rb)
	g, err := GatherMapped(m, rb, ids, dst, 1, check)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if !bytes.Equal(dst[i*rb:(i+1)*rb], data[id*rb:(id+1)*rb]) {
			t.Fatalf("row %d differs", id)
		}
	}
	// One thread: the first row of each page faults it in, the second
	// finds it resident.
	if g.DeviceRows != 4 || g.DeviceBytes < 4*ps {
		t.Fatalf("device rows %d bytes %d, want 4 rows and >= %d bytes", g.DeviceRows, g.DeviceBytes, 4*ps)
	}
	// Up to one major fault per page (a retried fault counts as minor:
	// osutil.ThreadIO).
	if g.Faults < 1 || g.Faults > 4 || g.Mapped() != (metrics.MappedReads{Bytes: g.DeviceBytes, Faults: g.Faults}) {
		t.Fatalf("%d major faults for 4 cold pages (%+v)", g.Faults, g.Mapped())
	}
	if g.Busy < 0 || g.Wait < 0 || g.Busy+g.Wait <= 0 {
		t.Fatalf("busy %v wait %v", g.Busy, g.Wait)
	}
	g, err = GatherMapped(m, rb, ids, dst, 4, check)
	if err != nil {
		t.Fatal(err)
	}
	if g.DeviceRows != 0 || g.DeviceBytes != 0 || g.Faults != 0 {
		t.Fatalf("resident pass: %d rows, %d bytes from the device", g.DeviceRows, g.DeviceBytes)
	}
	if _, err := GatherMapped(m, rb, ids, dst, 2, check[:3]); err == nil {
		t.Fatal("a check list of the wrong length was accepted")
	}
}

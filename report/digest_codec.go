package report

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
)

// A digest stored with its run (DigestStore) is read for every finished
// run of an experiment whenever a server first draws it, a thousand at a
// time: a compact binary form decodes in a microsecond where JSON took
// tens. Format (little-endian, varints as encoding/binary): 'D', the
// format version, the fingerprint of the digested fields (4 bytes,
// fields.MeanFingerprint), then the fields of Digest in a fixed order (see
// encodeDigest). Any change to Digest's fields needs a new version here;
// TestDigestCodecRoundTrip fills every field and fails when one is not
// carried. A metric added to or removed from the digested fields
// (engine/metrics/fields) changes the fingerprint instead: the digests
// stored before lack its mean, and are made again.

// digestFormat versions the stored digest: a stored digest of another
// format, or of another fingerprint, is made again from the epochs.
// Format 7 added the fingerprint; format 8 the counters' means in Mean
// (CounterPrefix).
const digestFormat = 8

var errDigest = errors.New("stored digest: malformed")

func encodeDigest(d *Digest) ([]byte, error) {
	b := binary.LittleEndian.AppendUint32([]byte{'D', digestFormat}, fields.MeanFingerprint())
	uv := func(n int) { b = binary.AppendUvarint(b, uint64(n)) }
	iv := func(n int64) { b = binary.AppendVarint(b, n) }
	f := func(x float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x)) }
	s := func(x string) { uv(len(x)); b = append(b, x...) }
	uv(d.Epochs)
	uv(d.Steady)
	uv(d.Measured)
	uv(d.WallMeasured)
	uv(d.BusyEpochs)
	uv(d.Warm)
	for _, x := range []float64{d.CacheHits, d.Lookups, d.BytesRead, d.BytesNeeded, d.BestVal, d.TestAtBest, d.FeatureBytes, d.DeviceRowBytes} {
		f(x)
	}
	keys := make([]string, 0, len(d.Mean))
	for k := range d.Mean {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	uv(len(keys))
	for _, k := range keys {
		s(k)
		f(d.Mean[k])
	}
	uv(len(d.Stages))
	for _, st := range d.Stages {
		s(st)
	}
	keys = keys[:0]
	for k := range d.Tiers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	uv(len(keys))
	for _, k := range keys {
		s(k)
		iv(d.Tiers[k].Lookups)
		iv(d.Tiers[k].Hits)
	}
	uv(len(d.Curve))
	for _, c := range d.Curve {
		iv(int64(c.Epoch))
		f(c.WallS)
		f(c.ValAcc)
	}
	return b, nil
}

// digestReader reads encodeDigest's form, remembering the first error.
type digestReader struct {
	b   []byte
	err error
}

func (r *digestReader) uv() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > math.MaxInt32 {
		r.err, r.b = errDigest, nil
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *digestReader) iv() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errDigest, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *digestReader) f() float64 {
	if len(r.b) < 8 {
		r.err, r.b = errDigest, nil
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

func (r *digestReader) s() string {
	n := r.uv()
	if n > len(r.b) {
		r.err, r.b = errDigest, nil
		return ""
	}
	x := string(r.b[:n])
	r.b = r.b[n:]
	return x
}

// count reads a length no larger than what the rest could hold.
func (r *digestReader) count(minBytes int) int {
	n := r.uv()
	if n*minBytes > len(r.b) {
		r.err, r.b = errDigest, nil
		return 0
	}
	return n
}

func decodeDigest(b []byte) (*Digest, bool) {
	if len(b) < 6 || b[0] != 'D' || b[1] != digestFormat || binary.LittleEndian.Uint32(b[2:]) != fields.MeanFingerprint() {
		return nil, false
	}
	r := &digestReader{b: b[6:]}
	d := &Digest{Mean: map[string]float64{}, Tiers: map[string]metrics.TierCount{}}
	d.Epochs, d.Steady, d.Measured, d.WallMeasured, d.BusyEpochs, d.Warm = r.uv(), r.uv(), r.uv(), r.uv(), r.uv(), r.uv()
	for _, p := range []*float64{&d.CacheHits, &d.Lookups, &d.BytesRead, &d.BytesNeeded, &d.BestVal, &d.TestAtBest, &d.FeatureBytes, &d.DeviceRowBytes} {
		*p = r.f()
	}
	for i, n := 0, r.count(9); i < n && r.err == nil; i++ {
		k := r.s()
		d.Mean[k] = r.f()
	}
	for i, n := 0, r.count(1); i < n && r.err == nil; i++ {
		d.Stages = append(d.Stages, r.s())
	}
	for i, n := 0, r.count(3); i < n && r.err == nil; i++ {
		k := r.s()
		d.Tiers[k] = metrics.TierCount{Lookups: r.iv(), Hits: r.iv()}
	}
	if n := r.count(17); r.err == nil && n > 0 {
		d.Curve = make([]CurvePoint, n)
		for i := range d.Curve {
			d.Curve[i] = CurvePoint{Epoch: int(r.iv()), WallS: r.f(), ValAcc: r.f()}
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, false
	}
	return d, true
}

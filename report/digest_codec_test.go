package report

import (
	"bytes"
	"reflect"
	"testing"

	"outcore/engine/metrics"
)

// fillAll sets every field of a struct to a distinct non-zero value (maps
// and slices with two entries), so that a codec that forgets a field fails
// the round trip.
func fillAll(t *testing.T, v reflect.Value, seed *int) {
	*seed++
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*seed))
	case reflect.Float64:
		v.SetFloat(float64(*seed) + 0.25)
	case reflect.String:
		v.SetString("s" + string(rune('a'+*seed%26)))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillAll(t, v.Field(i), seed)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fillAll(t, s.Index(i), seed)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 2; i++ {
			k := reflect.New(v.Type().Key()).Elem()
			fillAll(t, k, seed)
			e := reflect.New(v.Type().Elem()).Elem()
			fillAll(t, e, seed)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		t.Fatalf("digest has a field of kind %s the test cannot fill", v.Kind())
	}
}

func TestDigestCodecRoundTrip(t *testing.T) {
	var d Digest
	seed := 0
	fillAll(t, reflect.ValueOf(&d).Elem(), &seed)
	b, err := encodeDigest(&d)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := decodeDigest(b)
	if !ok || !reflect.DeepEqual(*got, d) {
		t.Fatalf("round trip lost something:\n got %+v\nwant %+v", got, d)
	}
	// A real digest too.
	real := DigestEpochs([]metrics.EpochRecord{{Epoch: 0, EpochS: 1, Evaluated: true, ValAcc: 0.5, WallS: 1.5}})
	b, _ = encodeDigest(real)
	if got, ok := decodeDigest(b); !ok || !reflect.DeepEqual(got, real) {
		t.Errorf("real digest: %+v, want %+v", got, real)
	}
	// a digest made with other digested fields (another fingerprint) is
	// refused, and so made again from the epochs
	other := append([]byte(nil), b...)
	other[2] ^= 1
	for _, bad := range [][]byte{nil, {'D'}, {'D', digestFormat - 1}, {'D', digestFormat}, other, append(b, 0), b[:len(b)-1]} {
		if _, ok := decodeDigest(bad); ok {
			t.Errorf("%x decoded", bad)
		}
	}
}

// FuzzDecodeDigest: any bytes decode or are refused, never panic, and a
// decoded digest survives encoding (compared as bytes: NaN ≠ NaN).
func FuzzDecodeDigest(f *testing.F) {
	b, _ := encodeDigest(DigestEpochs([]metrics.EpochRecord{{EpochS: 1, Evaluated: true, ValAcc: 0.5, Stages: map[string]float64{"forward_s": 0.1}, Tiers: map[string]metrics.TierCount{"cpu": {Lookups: 4, Hits: 2}}}}))
	f.Add(b)
	f.Add([]byte{'D', digestFormat})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, ok := decodeDigest(b)
		if !ok {
			return
		}
		e1, _ := encodeDigest(d)
		d2, ok := decodeDigest(e1)
		if !ok {
			t.Fatalf("%x decodes to %+v, whose encoding does not decode", b, d)
		}
		if e2, _ := encodeDigest(d2); !bytes.Equal(e1, e2) {
			t.Fatalf("%x decodes to %+v, which does not survive encoding", b, d)
		}
	})
}

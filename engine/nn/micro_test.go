package nn

import "testing"

func BenchmarkMicroDropout(b *testing.B) {
	t := NewTensor(100000, 256)
	for i := 0; i < b.N; i++ {
		Dropout(t, 0.5, uint64(i))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Data)), "ns/elem")
}
func BenchmarkMicroRelu(b *testing.B) {
	t := NewTensor(100000, 256)
	for i := 0; i < b.N; i++ {
		ActForward(ActReLU, t)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Data)), "ns/elem")
}
func BenchmarkMicroReluBack(b *testing.B) {
	t := NewTensor(100000, 256)
	g := NewTensor(100000, 256)
	for i := range t.Data {
		t.Data[i] = float32(i%7) - 3
	}
	for i := 0; i < b.N; i++ {
		ActBackward(ActReLU, t, g, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Data)), "ns/elem")
}

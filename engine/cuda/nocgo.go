//go:build !cgo

package cuda

import (
	"errors"

	"outcore/engine/graph"
	"outcore/engine/nn"
)

// ErrUnavailable wraps every reason Open finds no usable GPU.
var ErrUnavailable = errors.New("no usable CUDA GPU")

// Device is unavailable in a build without cgo.
type Device struct {
	Name         string
	CC           [2]int
	DriverVer    int
	NVRTCVersion [2]int
	MemTotal     int64
}

// Open always fails without cgo: dlopen needs it.
func Open() (*Device, error) {
	return nil, errors.Join(ErrUnavailable, errors.New("built without cgo (dlopen of libcuda needs cgo)"))
}

// CheckKernels always fails without cgo.
func CheckKernels(cc [2]int) ([2]int, int, error) {
	_, err := Open()
	return [2]int{}, 0, err
}

// Model is unavailable in a build without cgo.
type Model struct{}

// NewModel always fails without cgo.
func NewModel(d *Device, m *nn.Model) (*Model, error) { return nil, Open2() }

// Step is never reached without cgo (NewSAGE fails).
func (s *Model) Step(blocks []graph.Block, x *nn.Tensor, labels []int32) (loss, acc float32, err error) {
	return 0, 0, Open2()
}

// Infer is never reached without cgo (NewSAGE fails).
func (s *Model) Infer(blocks []graph.Block, x *nn.Tensor) (*nn.Tensor, error) { return nil, Open2() }

// Close does nothing without cgo.
func (s *Model) Close() {}

// Open2 is Open's error alone.
func Open2() error {
	_, err := Open()
	return err
}

// StagingBytes is the page-locked host memory a device's staging holds
// (staging.go; none without cgo).
const StagingBytes = 8 * 4 << 20

//go:build !cgo

package cuda

import "errors"

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

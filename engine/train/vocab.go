package train

// The run's vocabulary lives in engine/vocab (the leaf the grid and the
// viewers import without linking the runtime); these are its names as the
// engine has always spelt them.

import "outcore/engine/vocab"

type (
	// Config is vocab.Config.
	Config = vocab.Config
	// Opts is vocab.Opts.
	Opts = vocab.Opts
	// Option is vocab.Option.
	Option = vocab.Option
	// DatasetShape is vocab.DatasetShape.
	DatasetShape = vocab.DatasetShape
)

// The configuration's constants (vocab).
const (
	EvalFull     = vocab.EvalFull
	ModelMemHost = vocab.ModelMemHost
	DeviceCPU    = vocab.DeviceCPU
	DeviceCUDA   = vocab.DeviceCUDA
	DeviceAuto   = vocab.DeviceAuto
	RuntimeFloor = vocab.RuntimeFloor
	StartFloor   = vocab.StartFloor
	OptInt       = vocab.OptInt
	OptFloat     = vocab.OptFloat
	OptBool      = vocab.OptBool
	OptString    = vocab.OptString
	OptBytes     = vocab.OptBytes
	OptEnum      = vocab.OptEnum
)

// ErrConfig is vocab.ErrConfig.
var ErrConfig = vocab.ErrConfig

// The configuration's functions (vocab).
var (
	DefaultConfig         = vocab.DefaultConfig
	LoadConfigFile        = vocab.LoadConfigFile
	ParseConfig           = vocab.ParseConfig
	ParseIntList          = vocab.ParseIntList
	ShapeOf               = vocab.ShapeOf
	ConservativeMinMemory = vocab.ConservativeMinMemory
	MinMemoryFor          = vocab.MinMemoryFor
	CheckFeasible         = vocab.CheckFeasible
	AsInfeasible          = vocab.AsInfeasible
)

// The first-batch probe is the runtime's: the floors of every binary that
// links it include the first mini-batch (vocab.MinMemoryFor).
func init() { vocab.SetFirstBatchProbe(ProbeShape) }

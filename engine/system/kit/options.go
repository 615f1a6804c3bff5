package kit

// Variant options, declared once (docs/ARCHITECTURE.md "Adding a
// system"). A variant writes one bind function in the style of the flag
// package:
//
//	func (o *options) bind(b *kit.Binder) {
//		b.Int(&o.samplers, "samplers", 4, "sampling workers", kit.Range(1, kit.MaxWorkers))
//		b.Enum(&o.buffer, "feature_buffer", "host", []string{"host", "device"}, "where the buffer lives")
//	}
//
// From it come the variant's declared options (train.Variant.Options, with
// each default and range as the docs and forms show them), the parse of
// a run's options into the struct (Parser) and the check of a
// configuration's options (train.Variant.CheckOptions), so a value out of
// range or not of the declared type is refused when a configuration is
// validated, at grid creation as well as at run time.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"outcore/engine/storage"
	"outcore/engine/train"
	"outcore/internal/units"
)

// MaxWorkers bounds every count of threads, goroutines or queue slots a
// variant option sets (samplers, io_threads, rings, queues): far above any
// host's cores, far below what would exhaust one.
const MaxWorkers = 4096

// Binder collects a variant's option declarations and, when parsing, sets
// each bound field from a run's options.
type Binder struct {
	cfg    train.Config
	opts   []train.Option
	set    map[string]func(string) error
	checks []func() error
}

// Config is the run configuration being parsed (the zero Config while the
// options are only declared).
func (b *Binder) Config() train.Config { return b.cfg }

// Rule restricts or describes one option: Range, AtLeast, Above, Below,
// PowerOfTwo, MultipleOf, Shown.
type Rule func(*rule)

type rule struct {
	shown          string
	lo, hi         float64
	hasLo, hasHi   bool
	loOpen, hiOpen bool
	pow2           bool
	mult           int64
}

// Range accepts lo <= v <= hi.
func Range(lo, hi float64) Rule {
	return func(r *rule) { r.lo, r.hi, r.hasLo, r.hasHi = lo, hi, true, true }
}

// AtLeast accepts v >= lo.
func AtLeast(lo float64) Rule { return func(r *rule) { r.lo, r.hasLo = lo, true } }

// Above accepts v > lo.
func Above(lo float64) Rule { return func(r *rule) { r.lo, r.hasLo, r.loOpen = lo, true, true } }

// Below accepts v < hi.
func Below(hi float64) Rule { return func(r *rule) { r.hi, r.hasHi, r.hiOpen = hi, true, true } }

// PowerOfTwo accepts only powers of two (integers and byte counts).
func PowerOfTwo() Rule { return func(r *rule) { r.pow2 = true } }

// MultipleOf accepts only multiples of n (0 included).
func MultipleOf(n int64) Rule { return func(r *rule) { r.mult = n } }

// Shown is the default as the option's declaration shows it, where the
// value depends on the host or the run ("number of CPUs", "from the
// budget").
func Shown(text string) Rule { return func(r *rule) { r.shown = text } }

func rulesOf(rules []Rule) rule {
	var r rule
	for _, f := range rules {
		f(&r)
	}
	return r
}

// describe is the range in words ("1..4096", "> 0", "a power of two from
// 512 to 1048576").
func (r rule) describe() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var s string
	switch {
	case r.hasLo && r.hasHi && !r.loOpen && !r.hiOpen:
		s = num(r.lo) + ".." + num(r.hi)
	case r.hasLo && r.hasHi:
		lo, hi := ">=", "<="
		if r.loOpen {
			lo = ">"
		}
		if r.hiOpen {
			hi = "<"
		}
		s = lo + " " + num(r.lo) + " and " + hi + " " + num(r.hi)
	case r.hasLo && r.loOpen:
		s = "> " + num(r.lo)
	case r.hasLo:
		s = ">= " + num(r.lo)
	case r.hasHi && r.hiOpen:
		s = "< " + num(r.hi)
	case r.hasHi:
		s = "<= " + num(r.hi)
	}
	if r.pow2 {
		s = strings.TrimSpace("a power of two " + s)
	}
	if r.mult > 0 {
		s = strings.TrimSpace(s + fmt.Sprintf(" a multiple of %d", r.mult))
	}
	return s
}

// check reports v outside the rule's range.
func (r rule) check(v float64) error {
	bad := (r.hasLo && (v < r.lo || r.loOpen && v == r.lo)) ||
		(r.hasHi && (v > r.hi || r.hiOpen && v == r.hi)) ||
		math.IsNaN(v) || math.IsInf(v, 0)
	if !bad && r.pow2 {
		i := int64(v)
		bad = float64(i) != v || i <= 0 || i&(i-1) != 0
	}
	if !bad && r.mult > 0 {
		i := int64(v)
		bad = float64(i) != v || i%r.mult != 0
	}
	if bad {
		return fmt.Errorf("%s is out of range, want %s", strconv.FormatFloat(v, 'f', -1, 64), r.describe())
	}
	return nil
}

// declare adds an option; parse sets the bound field from a given value.
func (b *Binder) declare(key, typ, def, help string, values []string, r rule, parse func(string) error) {
	if r.shown != "" {
		def = r.shown
	}
	b.opts = append(b.opts, train.Option{Key: key, Type: typ, Default: def, Help: help, Values: values, Range: r.describe()})
	if b.set == nil {
		b.set = map[string]func(string) error{}
	}
	b.set[key] = parse
}

// Int binds an integer option.
func (b *Binder) Int(dst *int, key string, def int, help string, rules ...Rule) {
	*dst = def
	r := rulesOf(rules)
	b.declare(key, train.OptInt, strconv.Itoa(def), help, nil, r, func(s string) error {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		if err := r.check(float64(v)); err != nil {
			return err
		}
		*dst = v
		return nil
	})
}

// Float binds a number option.
func (b *Binder) Float(dst *float64, key string, def float64, help string, rules ...Rule) {
	*dst = def
	r := rulesOf(rules)
	b.declare(key, train.OptFloat, strconv.FormatFloat(def, 'g', -1, 64), help, nil, r, func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		if err := r.check(v); err != nil {
			return err
		}
		*dst = v
		return nil
	})
}

// Bool binds a true/false option.
func (b *Binder) Bool(dst *bool, key string, def bool, help string, rules ...Rule) {
	*dst = def
	b.declare(key, train.OptBool, strconv.FormatBool(def), help, nil, rulesOf(rules), func(s string) error {
		v, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not true/false", s)
		}
		*dst = v
		return nil
	})
}

// Bytes binds a byte count with a unit ("64MiB"); def is shown in bytes
// unless a Shown rule says otherwise.
func (b *Binder) Bytes(dst *int64, key string, def int64, help string, rules ...Rule) {
	*dst = def
	r := rulesOf(rules)
	b.declare(key, train.OptBytes, strconv.FormatInt(def, 10), help, nil, r, func(s string) error {
		v, err := units.ParseMemLimit(s, 0)
		if err != nil {
			return err
		}
		if err := r.check(float64(v)); err != nil {
			return err
		}
		*dst = v
		return nil
	})
}

// Size binds a size kept as given, bytes with a unit or a percentage of
// the feature table ("10%"), resolved once the dataset is known
// (SizeBytes).
func (b *Binder) Size(dst *string, key, def, help string, rules ...Rule) {
	*dst = def
	b.declare(key, train.OptBytes, def, help, nil, rulesOf(rules), func(s string) error {
		if _, err := units.ParseMemLimit(s, 1<<30); err != nil {
			return err
		}
		*dst = s
		return nil
	})
}

// Auto is the value of a SizeOrAuto option left to the variant's plan.
const Auto = "auto"

// SizeOrAuto binds a text option that is Auto (its default: the
// variant's plan sizes it, as a device cache that takes what the device
// budget leaves) or a size as Size takes it, kept as given.
func (b *Binder) SizeOrAuto(dst *string, key, help string, rules ...Rule) {
	*dst = Auto
	b.Func(key, Auto, help, func(s string) error {
		if s != Auto {
			if _, err := units.ParseMemLimit(s, 1<<30); err != nil {
				return err
			}
		}
		*dst = s
		return nil
	}, rules...)
}

// SizeBytes resolves a Size option's value against the feature table's
// bytes (0 when it does not parse: the options' check refused it).
func SizeBytes(spec string, featureBytes int64) int64 {
	v, err := units.ParseMemLimit(spec, featureBytes)
	if err != nil {
		return 0
	}
	return v
}

// Enum binds an option that is one of values.
func (b *Binder) Enum(dst *string, key, def string, values []string, help string, rules ...Rule) {
	*dst = def
	b.declare(key, train.OptEnum, def, help, values, rulesOf(rules), func(s string) error {
		for _, v := range values {
			if s == v {
				*dst = v
				return nil
			}
		}
		return fmt.Errorf("%q, want one of %s", s, strings.Join(values, ", "))
	})
}

// Func binds a text option of the variant's own syntax: parse checks a
// given value and stores what it means (the default is not parsed).
func (b *Binder) Func(key, def, help string, parse func(string) error, rules ...Rule) {
	b.declare(key, train.OptString, def, help, nil, rulesOf(rules), parse)
}

// Check adds a rule between options, run after every given value is set;
// its error should name the options.
func (b *Binder) Check(f func() error) { b.checks = append(b.checks, f) }

// Set marks whether key was given in the run's options.
func (b *Binder) Set(dst *bool, key string) {
	_, *dst = b.cfg.Options[key]
}

// Bind is a variant's bind function over its options struct O.
type Bind[O any] func(o *O, b *Binder)

// Options are the declarations of bind (train.Variant.Options).
func (bind Bind[O]) Options() []train.Option {
	var o O
	b := &Binder{}
	bind(&o, b)
	return b.opts
}

// Parse returns cfg's options bound to a fresh O: the declared defaults,
// overridden by the given values, checked by the rules. An error names
// the option (train.ErrConfig).
func (bind Bind[O]) Parse(cfg train.Config) (O, error) {
	var o O
	b := &Binder{cfg: cfg}
	bind(&o, b)
	for _, k := range slices.Sorted(maps.Keys(cfg.Options)) {
		set, ok := b.set[k]
		if !ok {
			return o, fmt.Errorf("%w: options.%s: %s has no option %q", train.ErrConfig, k, cfg.System, k)
		}
		if err := set(cfg.Options[k]); err != nil {
			return o, fmt.Errorf("%w: options.%s: %v", train.ErrConfig, k, err)
		}
	}
	for _, c := range b.checks {
		if err := c(); err != nil {
			return o, fmt.Errorf("%w: options: %v", train.ErrConfig, err)
		}
	}
	return o, nil
}

// Check parses cfg's options and drops the result (train.Variant.CheckOptions).
func (bind Bind[O]) Check(cfg train.Config) error {
	_, err := bind.Parse(cfg)
	return err
}

// Workers binds a count of threads, goroutines or queue slots
// (1..MaxWorkers).
func (b *Binder) Workers(dst *int, key string, def int, help string, rules ...Rule) {
	b.Int(dst, key, def, help, append([]Rule{Range(1, MaxWorkers)}, rules...)...)
}

// ProfileBatches binds profile_batches, the mini-batches profiling samples
// (ProfileWorkspace), "mini-batches sampled " what.
func (b *Binder) ProfileBatches(dst *int, what string) {
	b.Int(dst, "profile_batches", 8, "mini-batches sampled "+what, Range(1, 1024))
}

// QueueDepth sets dst to the run's queue_depth, or the storage default
// where the run leaves it to the variant (the depth of a variant's own
// rings).
func (b *Binder) QueueDepth(dst *int) {
	b.Check(func() error {
		if *dst = b.cfg.QueueDepth; *dst == 0 {
			*dst = storage.DefaultQueueDepth
		}
		return nil
	})
}

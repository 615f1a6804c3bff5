// Package external is the home of external systems (DESIGN §14): training
// programs outside this module — a PyTorch or C++ program, a paper's public
// artifact — that the operator registers in a file of the data directory and
// that grids name like a built-in ("external:NAME"). It holds the registry
// file's format and its checks, the arguments and environment a run of one
// gets, and the parser of the record protocol those programs write their
// numbers in. It starts nothing: the runner supervises the program as it
// supervises `outcore train`.
package external

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"outcore/internal/units"
)

// FileName is the registry's name in the data directory
// (`<data dir>/systems.json`); `serve --systems FILE` names another.
const FileName = "systems.json"

// Prefix starts a grid's system entry that names an external system:
// "external:NAME".
const Prefix = "external:"

// MaxFileBytes bounds the registry file read.
const MaxFileBytes = 1 << 20

// Option types a registry declares.
const (
	TypeInt   = "int"   // a whole number within [min, max]
	TypeFloat = "float" // a finite number within [min, max]
	TypeBool  = "bool"  // true or false
	TypeEnum  = "enum"  // one of values (strings)
	TypeBytes = "bytes" // a byte count: a number or "64MiB"; within [min, max], passed as bytes
)

// ErrRegistry marks every error about the registry file or a request's use
// of it; callers branch on it with errors.Is.
var ErrRegistry = errors.New("external systems")

var (
	nameRe   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	optionRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	enumRe   = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.,:+-]{0,63}$`)
	envRe    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)
)

// reservedOption starts the option names outcore keeps for the paths it
// hands the program (Argv); the environment variables outcore sets
// (Env) start with it too, upper-cased.
const reservedOption = "outcore"

// File is the registry file's JSON.
type File struct {
	Systems []System `json:"systems"`
}

// System is one registered program.
type System struct {
	// Name is what grids call it: "external:NAME".
	Name string `json:"name"`
	// Help says what the program is, for the form and `exp` listings.
	Help string `json:"help,omitempty"`
	// Command is the program and its fixed arguments, run without a
	// shell. Command[0] is an absolute path, or a path relative to the
	// registry file's directory; Load resolves it and checks that it is an
	// executable regular file. The other elements are passed as written.
	Command []string `json:"command"`
	// Workdir is the program's working directory: absolute, or relative
	// to the registry file's directory; the file's directory when empty.
	Workdir string `json:"workdir,omitempty"`
	// Env is extra environment the operator gives the program
	// (LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, ...): never from a request.
	Env map[string]string `json:"env,omitempty"`
	// Options are the only settings a grid may give it.
	Options map[string]Option `json:"options,omitempty"`
}

// Option declares one setting of an external system.
type Option struct {
	Type string `json:"type"`
	// Min and Max bound int, float and bytes options (bytes: a number or
	// a size such as "1GiB"); both are required for them.
	Min any `json:"min,omitempty"`
	Max any `json:"max,omitempty"`
	// Values are an enum's allowed values.
	Values []string `json:"values,omitempty"`
	// Default is the value a run gets when its grid does not set it.
	Default any    `json:"default"`
	Help    string `json:"help,omitempty"`

	lo, hi float64 // the parsed bounds
}

// Registry is a loaded registry file.
type Registry struct {
	path    string
	systems map[string]*System
}

// Path is the file the registry was loaded from ("" for an empty one).
func (r *Registry) Path() string {
	if r == nil {
		return ""
	}
	return r.path
}

// Names lists the registered systems, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.systems))
	for n := range r.systems {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the system named name (without the "external:" prefix).
func (r *Registry) Lookup(name string) (*System, bool) {
	if r == nil {
		return nil, false
	}
	s, ok := r.systems[name]
	return s, ok
}

// ParseRef splits a grid's system entry "external:NAME" into NAME; ok is
// false for an entry without the prefix (a built-in).
func ParseRef(entry string) (name string, ok bool) {
	return strings.CutPrefix(entry, Prefix)
}

// Check is what a request's use of an external system must pass: the
// system is registered and options sets only declared options, each within
// its type and range. The error names the system or the option.
func (r *Registry) Check(name string, options map[string]any) error {
	s, ok := r.Lookup(name)
	if !ok {
		where := "no registry file is loaded"
		switch {
		case r.Path() != "" && len(r.Names()) == 0:
			where = r.Path() + " registers none"
		case r.Path() != "":
			where = r.Path() + " registers " + strings.Join(r.Names(), ", ")
		}
		return fmt.Errorf("%w: %q is not a registered external system (%s); only the operator registers one", ErrRegistry, name, where)
	}
	_, err := s.Resolve(options)
	return err
}

// Load reads and checks the registry file at path: strict JSON (an unknown
// field is refused), names and option declarations checked, every
// command's program an executable regular file and every working directory
// a directory. Errors name the file, the system and the field.
func Load(path string) (*Registry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRegistry, path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRegistry, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRegistry, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrRegistry, abs)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%w: %s is writable by its group or by others (mode %v): it names programs the server runs, so only its owner may write it (chmod go-w)", ErrRegistry, abs, st.Mode().Perm())
	}
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d a registry may have", ErrRegistry, abs, st.Size(), MaxFileBytes)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRegistry, abs, err)
	}
	r, err := Parse(data, filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	r.path = abs
	for _, n := range r.Names() {
		if err := r.systems[n].checkFiles(); err != nil {
			return nil, fmt.Errorf("%s: %w", abs, err)
		}
	}
	return r, nil
}

// LoadDefault loads `<dataDir>/systems.json`; a data directory without
// one has no external systems (an empty registry, no error).
func LoadDefault(dataDir string) (*Registry, error) {
	p := filepath.Join(dataDir, FileName)
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return &Registry{systems: map[string]*System{}}, nil
	}
	return Load(p)
}

// Parse checks a registry file's bytes without the file system: dir is
// the directory relative paths are resolved against. Load adds the checks
// of the files the systems name.
func Parse(data []byte, dir string) (*Registry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrRegistry, jsonError(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: text after the JSON object", ErrRegistry)
	}
	if f.Systems == nil {
		return nil, fmt.Errorf("%w: field \"systems\" is missing (want {\"systems\": [...]})", ErrRegistry)
	}
	r := &Registry{systems: map[string]*System{}}
	for i := range f.Systems {
		s := &f.Systems[i]
		if err := s.check(dir); err != nil {
			label := fmt.Sprintf("systems[%d]", i)
			if s.Name != "" {
				label = fmt.Sprintf("system %q", s.Name)
			}
			return nil, fmt.Errorf("%w: %s: %v", ErrRegistry, label, err)
		}
		if _, dup := r.systems[s.Name]; dup {
			return nil, fmt.Errorf("%w: system %q is registered twice", ErrRegistry, s.Name)
		}
		r.systems[s.Name] = s
	}
	return r, nil
}

// check validates a system's declaration and resolves its paths against dir.
func (s *System) check(dir string) error {
	if !nameRe.MatchString(s.Name) {
		return fmt.Errorf("field \"name\": %q is not a name (want a lower-case letter, then up to 39 of a-z, 0-9, _ and -)", s.Name)
	}
	if len(s.Command) == 0 || s.Command[0] == "" {
		return errors.New("field \"command\": want an array of strings, the program first (never a shell string)")
	}
	for i, a := range s.Command {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("field \"command\"[%d]: has a NUL byte", i)
		}
	}
	s.Command = slices.Clone(s.Command)
	if !filepath.IsAbs(s.Command[0]) {
		s.Command[0] = filepath.Join(dir, s.Command[0])
	}
	switch {
	case s.Workdir == "":
		s.Workdir = dir
	case strings.IndexByte(s.Workdir, 0) >= 0:
		return errors.New("field \"workdir\": has a NUL byte")
	case !filepath.IsAbs(s.Workdir):
		s.Workdir = filepath.Join(dir, s.Workdir)
	}
	for k, v := range s.Env {
		if !envRe.MatchString(k) {
			return fmt.Errorf("field \"env\": %q is not a variable name (want A-Z, 0-9 and _)", k)
		}
		if strings.HasPrefix(k, strings.ToUpper(reservedOption)) {
			return fmt.Errorf("field \"env\": %s: names starting with OUTCORE are outcore's own (Env)", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("field \"env\": %s has a NUL byte", k)
		}
	}
	for name, o := range s.Options {
		if !optionRe.MatchString(name) {
			return fmt.Errorf("field \"options\": %q is not an option name (want a lower-case letter, then up to 39 of a-z, 0-9 and _)", name)
		}
		if strings.HasPrefix(name, reservedOption) {
			return fmt.Errorf("option %q: names starting with %q are outcore's own arguments", name, reservedOption)
		}
		if err := o.check(); err != nil {
			return fmt.Errorf("option %q: %v", name, err)
		}
		s.Options[name] = o
	}
	return nil
}

// checkFiles checks the paths a system names on the file system.
func (s *System) checkFiles() error {
	st, err := os.Stat(s.Command[0])
	if err != nil {
		return fmt.Errorf("%w: system %q: field \"command\"[0]: %v", ErrRegistry, s.Name, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%w: system %q: field \"command\"[0]: %s is not an executable file", ErrRegistry, s.Name, s.Command[0])
	}
	if st, err := os.Stat(s.Workdir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: system %q: field \"workdir\": %s is not a directory", ErrRegistry, s.Name, s.Workdir)
	}
	return nil
}

// check validates an option's declaration and parses its bounds.
func (o *Option) check() error {
	switch o.Type {
	case TypeInt, TypeFloat, TypeBytes:
		if o.Values != nil {
			return fmt.Errorf("field \"values\" belongs to enum options, not %s", o.Type)
		}
		if o.Min == nil || o.Max == nil {
			return fmt.Errorf("fields \"min\" and \"max\" are required for a %s option", o.Type)
		}
		lo, err := o.number(o.Min)
		if err != nil {
			return fmt.Errorf("field \"min\": %v", err)
		}
		hi, err := o.number(o.Max)
		if err != nil {
			return fmt.Errorf("field \"max\": %v", err)
		}
		if lo > hi {
			return fmt.Errorf("field \"min\" (%v) is above \"max\" (%v)", o.Min, o.Max)
		}
		o.lo, o.hi = lo, hi
	case TypeBool:
		if o.Min != nil || o.Max != nil || o.Values != nil {
			return errors.New("a bool option has no min, max or values")
		}
	case TypeEnum:
		if o.Min != nil || o.Max != nil {
			return errors.New("an enum option has no min or max")
		}
		if len(o.Values) == 0 {
			return errors.New("field \"values\": an enum option lists its allowed values")
		}
		for _, v := range o.Values {
			if !enumRe.MatchString(v) {
				return fmt.Errorf("field \"values\": %q is not a value (want up to 64 of A-Z, a-z, 0-9, _ . , : + -, not starting with - or ,)", v)
			}
		}
	default:
		return fmt.Errorf("field \"type\": %q is not a type (want int, float, bool, enum or bytes)", o.Type)
	}
	if o.Default == nil {
		return errors.New("field \"default\" is required")
	}
	if _, err := o.value(o.Default); err != nil {
		return fmt.Errorf("field \"default\": %v", err)
	}
	return nil
}

// number reads a bound or value of an int, float or bytes option.
func (o *Option) number(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		g, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not a number", x)
		}
		f = g
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case string:
		if o.Type != TypeBytes {
			return 0, fmt.Errorf("%q is a string, want a number", x)
		}
		if strings.HasSuffix(strings.TrimSpace(x), "%") {
			return 0, fmt.Errorf("%q: a bytes option takes a size, not a percentage", x)
		}
		b, err := units.ParseMemLimit(x, 0)
		if err != nil {
			return 0, err
		}
		f = float64(b)
	default:
		return 0, fmt.Errorf("%v (%T) is not a number", v, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%v is not a finite number", v)
	}
	if o.Type != TypeFloat {
		if f != math.Trunc(f) {
			return 0, fmt.Errorf("%v is not a whole number", v)
		}
		if math.Abs(f) > 1<<53 {
			return 0, fmt.Errorf("%v is too large", v)
		}
	}
	if o.Type == TypeBytes && f < 0 {
		return 0, fmt.Errorf("%v is a negative size", v)
	}
	return f, nil
}

// value checks v against the option and returns it as the program
// receives it (the text after "--name=").
func (o *Option) value(v any) (string, error) {
	switch o.Type {
	case TypeBool:
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Errorf("%v (%T) is not true or false", v, v)
		}
		return strconv.FormatBool(b), nil
	case TypeEnum:
		s, ok := v.(string)
		if !ok || !slices.Contains(o.Values, s) {
			return "", fmt.Errorf("%v is not one of %s", v, strings.Join(o.Values, ", "))
		}
		return s, nil
	}
	f, err := o.number(v)
	if err != nil {
		return "", err
	}
	if f < o.lo || f > o.hi {
		return "", fmt.Errorf("%v is outside [%v, %v]", v, o.Min, o.Max)
	}
	if o.Type == TypeFloat {
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return strconv.FormatInt(int64(f), 10), nil
}

// Resolve checks a request's options against the declaration — an
// undeclared option or a value outside its type and range is refused with
// a message naming it — and returns every declared option's value as the
// program receives it, the default where options does not set one.
func (s *System) Resolve(options map[string]any) (map[string]string, error) {
	for name := range options {
		if _, ok := s.Options[name]; !ok {
			declared := slices.Sorted(maps.Keys(s.Options))
			return nil, fmt.Errorf("%w: external system %q has no option %q (it declares: %s); a grid sets only declared options", ErrRegistry, s.Name, name, strings.Join(declared, ", "))
		}
	}
	out := make(map[string]string, len(s.Options))
	for name, o := range s.Options {
		v, ok := options[name]
		if !ok {
			v = o.Default
		}
		txt, err := o.value(v)
		if err != nil {
			return nil, fmt.Errorf("%w: external system %q: option %q: %v", ErrRegistry, s.Name, name, err)
		}
		out[name] = txt
	}
	return out, nil
}

// jsonError words a decoding error with the field it concerns.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q: a JSON %s where a %v belongs", te.Field, te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not JSON at byte %d: %v", se.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "not JSON: the text ends before the object does"
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + f
	}
	return err.Error()
}

// OptionsFromText turns option values written as text (a grid's system
// entry "external:NAME:lr=0.1,epochs=3", the form's fields) into the
// values Resolve checks: a number for int and float options, true or
// false for bool, the text itself for enum and bytes. A name s does not
// declare is passed on as text, for Resolve to refuse by name; a value
// that is not of its option's type is refused here, naming the option.
func (s *System) OptionsFromText(text map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(text))
	for name, v := range text {
		o, ok := s.Options[name]
		if !ok {
			out[name] = v
			continue
		}
		switch o.Type {
		case TypeInt, TypeFloat:
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("%w: external system %q: option %q: %q is not a number", ErrRegistry, s.Name, name, v)
			}
			out[name] = f
		case TypeBool:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("%w: external system %q: option %q: %q is not true or false", ErrRegistry, s.Name, name, v)
			}
			out[name] = b
		default:
			out[name] = v
		}
	}
	return out, nil
}

// CheckText is Check of options written as text (OptionsFromText).
func (r *Registry) CheckText(name string, text map[string]string) error {
	s, ok := r.Lookup(name)
	if !ok {
		return r.Check(name, nil)
	}
	opts, err := s.OptionsFromText(text)
	if err != nil {
		return err
	}
	return r.Check(name, opts)
}

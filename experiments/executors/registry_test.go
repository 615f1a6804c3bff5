package executors

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"
)

func testRegistration(name string) Registration {
	return Registration{Name: name,
		CheckOptions: func(json.RawMessage) error { return nil },
		Flags:        func(*flag.FlagSet) func() (any, error) { return func() (any, error) { return nil, nil } },
		New:          func(Host, Config) (Executor, error) { return nil, nil }}
}

// TestRegistry: the local executor is always known and first; registered
// ones follow by name; an unknown name is refused listing them; a second
// registration of a name, of "local" or an incomplete one panics.
func TestRegistry(t *testing.T) {
	Register(testRegistration("zeta"))
	Register(testRegistration("alpha"))
	if got := strings.Join(Names(), ","); got != "local,alpha,zeta" {
		t.Fatalf("names %s", got)
	}
	if _, ok := Lookup("alpha"); !ok {
		t.Fatal("alpha not found")
	}
	if _, ok := Lookup(Local); ok {
		t.Fatal("local has a registration")
	}
	for _, n := range []string{"local", "alpha", "zeta"} {
		if err := Valid(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if err := Valid("pbs"); err == nil || err.Error() != `unknown executor "pbs" (executors: local, alpha, zeta)` {
		t.Errorf("pbs: %v", err)
	}
	incomplete := testRegistration("beta")
	incomplete.New = nil
	for _, r := range []Registration{testRegistration("alpha"), testRegistration(Local), incomplete} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %q did not panic", r.Name)
				}
			}()
			Register(r)
		}()
	}
}

package vocab

import "testing"

// TestOptionCheck: each option type parses its values and refuses others.
func TestOptionCheck(t *testing.T) {
	cases := []struct {
		o    Option
		val  string
		fail bool
	}{
		{Option{Type: OptInt}, "12", false},
		{Option{Type: OptInt}, "1.5", true},
		{Option{Type: OptFloat}, "1.5", false},
		{Option{Type: OptFloat}, "x", true},
		{Option{Type: OptBool}, "true", false},
		{Option{Type: OptBool}, "yes", true},
		{Option{Type: OptBytes}, "64MiB", false},
		{Option{Type: OptBytes}, "10%", false},
		{Option{Type: OptBytes}, "64 parsecs", true},
		{Option{Type: OptString}, "anything", false},
		{Option{Type: OptEnum, Values: []string{"host", "device"}}, "device", false},
		{Option{Type: OptEnum, Values: []string{"host", "device"}}, "gpu", true},
	}
	for _, c := range cases {
		if err := c.o.check(c.val); (err != nil) != c.fail {
			t.Errorf("%s %q: err %v", c.o.Type, c.val, err)
		}
	}
}

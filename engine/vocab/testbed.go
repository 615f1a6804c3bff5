package vocab

import (
	"fmt"
	"slices"
	"strings"

	"outcore/engine/testbed"
)

// checkTestbed checks a configuration's testbed against the profiles
// engine/testbed holds ("" is this-host).
func checkTestbed(name string) error {
	if name == "" {
		return nil
	}
	if names := testbed.Names(); !slices.Contains(names, name) {
		return fmt.Errorf("unknown testbed %q (have %s)", name, strings.Join(names, ", "))
	}
	return nil
}

// PaperTestbed reports whether the configuration's testbed emulates a
// paper's host (not "" nor this-host).
func (c *Config) PaperTestbed() bool {
	return c.Testbed != "" && c.Testbed != testbed.ThisHost
}

package web

import (
	"net/url"
	"strings"
	"testing"
)

// TestFormIDs: the form's node-ids checkboxes are the grid's ids axis
// (each numbering its own runs, on the dataset's twin); none ticked adds
// no axis; an unknown numbering is refused on its field; the posted form
// decodes the ticked boxes.
func TestFormIDs(t *testing.T) {
	env := formEnvFor(t)
	in := goodInput()
	base, errs := ValidateForm(in, env)
	if len(errs) != 0 || base.Axes.IDs != nil {
		t.Fatalf("none ticked: %v, ids %v", errs, base.Axes.IDs)
	}
	in.IDs = []string{"scattered", "local", "local"}
	g, errs := ValidateForm(in, env)
	if len(errs) != 0 || strings.Join(g.Axes.IDs, ",") != "scattered,local" || g.Count() != 2*base.Count() {
		t.Fatalf("two numberings: %v, ids %v, %d runs against %d", errs, g.Axes.IDs, g.Count(), base.Count())
	}
	if !strings.Contains(string(g.JSON()), `"ids":["scattered","local"]`) {
		t.Errorf("grid %s has no ids axis", g.JSON())
	}
	if f := Factors(g); !strings.Contains(f, "2 id numberings") {
		t.Errorf("preview's factors %q leave out the numberings", f)
	}
	in.IDs = []string{"by-degree"}
	if _, errs = ValidateForm(in, env); !strings.Contains(errs[IDsField], `unknown numbering "by-degree"`) {
		t.Errorf("unknown numbering: %v", errs)
	}
	vals := url.Values{"ids": {"local"}, "name": {"x"}}
	got, err := DecodeForm("application/x-www-form-urlencoded", []byte(vals.Encode()))
	if err != nil || strings.Join(got.IDs, ",") != "local" {
		t.Fatalf("decoded ids %v (%v)", got.IDs, err)
	}
}

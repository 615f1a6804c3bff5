package web

import (
	"bytes"
	"errors"
	"mime/multipart"
	"reflect"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/experiments/grid"
)

// pureFormEnv is a form environment without a data directory: the tiny
// dataset exists, presets are the generator's, grids get their own checks.
func pureFormEnv() FormEnv {
	return FormEnv{
		Exists: func(name string) bool { return name == "tiny" },
		Preset: presetMeta,
		ValidName: func(name string) error {
			if dataset.ValidateName(name) != nil {
				return errors.New("bad name")
			}
			return nil
		},
		Check: func(g *grid.Grid, _ map[string]dataset.Meta) []grid.Problem { return g.Problems() },
	}
}

func multipartBody(t testing.TB, fields [][2]string) (string, []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		w.WriteField(f[0], f[1])
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

func TestDecodeForm(t *testing.T) {
	want := FormInput{Name: "n", DatasetMode: "existing", Dataset: "tiny", Variants: []string{"pyg+", "ginex"}, MemLimits: "64MiB", Epochs: "2"}
	in, err := DecodeForm("application/x-www-form-urlencoded", []byte("name=n&dataset_mode=existing&dataset=tiny&variants=pyg%2B&variants=ginex&mem_limits=64MiB&epochs=2&_csrf=x"))
	if err != nil || !reflect.DeepEqual(in, want) {
		t.Errorf("url-encoded: %+v %v", in, err)
	}
	ct, body := multipartBody(t, [][2]string{{"name", "n"}, {"dataset_mode", "existing"}, {"dataset", "tiny"}, {"variants", "pyg+"}, {"variants", "ginex"}, {"mem_limits", "64MiB"}, {"epochs", "2"}})
	if in, err := DecodeForm(ct, body); err != nil || !reflect.DeepEqual(in, want) {
		t.Errorf("multipart: %+v %v", in, err)
	}
	var file bytes.Buffer
	w := multipart.NewWriter(&file)
	fw, _ := w.CreateFormFile("name", "x.txt")
	fw.Write([]byte("data"))
	w.Close()
	for _, tc := range []struct {
		ct   string
		body string
		msg  string
	}{
		{"application/x-www-form-urlencoded", "name=%zz", "invalid URL escape"},
		{"application/x-www-form-urlencoded", strings.Repeat("a=1&", 1001), "at most 1000"},
		{"multipart/form-data", "x", "without a boundary"},
		{"multipart/form-data; boundary=zz", "garbage", "form:"},
		{w.FormDataContentType(), file.String(), "file uploads"},
		{"text/plain", "name=n", "not a form"},
		{"a/b; ===", "", "content type"},
	} {
		if _, err := DecodeForm(tc.ct, []byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("DecodeForm(%q, %.40q) = %v, want %q", tc.ct, tc.body, err, tc.msg)
		}
	}
}

// FuzzDecodeForm: any body under either content type is refused with an
// error or read into a form; ValidateForm then lists problems or gives a
// grid that parses back as the same grid (what the dashboard creates is
// what a grid file would say).
func FuzzDecodeForm(f *testing.F) {
	f.Add(false, []byte("name=x&dataset_mode=existing&dataset=tiny&variants=pyg%2B&variants=gnndrive&mem_limits=64MiB,+none&batches=512&model=sage&fanouts=10,5;15,10&epochs=3&repeats=2"))
	f.Add(false, []byte("dataset_mode=generate&preset=tiny&new_dataset=n1&variants=ginex&mem_limits=200%25&epochs=1"))
	f.Add(false, []byte("a=%zz&&=&variants"))
	_, mp := multipartBody(f, [][2]string{{"name", "x"}, {"dataset", "tiny"}, {"variants", "pyg+"}, {"epochs", "2"}})
	f.Add(true, mp)
	env := pureFormEnv()
	f.Fuzz(func(t *testing.T, multi bool, body []byte) {
		ct := "application/x-www-form-urlencoded"
		if multi {
			// The boundary multipartBody's writer chose is random: find it.
			ct = "multipart/form-data; boundary=" + boundaryOf(body)
		}
		in, err := DecodeForm(ct, body)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "form: ") {
				t.Fatalf("error without the form: prefix: %v", err)
			}
			return
		}
		g, errs := ValidateForm(in, env)
		if len(errs) > 0 {
			for f, msg := range errs {
				if msg == "" {
					t.Fatalf("field %q refused without a reason", f)
				}
			}
			return
		}
		if g == nil {
			t.Fatal("no problems and no grid")
		}
		back, err := grid.ParseGrid(g.JSON())
		if err != nil {
			t.Fatalf("valid form gives a grid that does not parse: %v\n%s", err, g.JSON())
		}
		if back.Count() != g.Count() || back.Name != g.Name || back.Dataset != g.Dataset {
			t.Fatalf("grid changed through JSON: %d/%d runs, %q/%q", back.Count(), g.Count(), back.Name, g.Name)
		}
	})
}

// boundaryOf is the boundary of a multipart body ("--B\r\n…"), or "x".
func boundaryOf(body []byte) string {
	line, _, _ := bytes.Cut(body, []byte("\r\n"))
	if b, ok := bytes.CutPrefix(line, []byte("--")); ok && len(b) > 0 && len(b) <= 70 {
		return string(b)
	}
	return "x"
}

package web

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"

	"outcore/internal/units"
)

// DecodeForm reads the new-experiment form from a request body as the
// browser sends it: application/x-www-form-urlencoded, or
// multipart/form-data (fields only; a file part is refused). The body is
// already within Limits.MaxBody (readBody). What it returns goes through
// ValidateForm next; FuzzDecodeForm fuzzes the two together.
func DecodeForm(contentType string, body []byte) (FormInput, error) {
	vals, err := formValues(contentType, body)
	if err != nil {
		return FormInput{}, err
	}
	one := func(k string) string {
		if v := vals[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var optionAxes map[string]string
	var extOpts map[string]map[string]string
	for k, v := range vals {
		if name, key, ok := splitExternalField(k); ok && len(v) > 0 && strings.TrimSpace(v[0]) != "" {
			if extOpts == nil {
				extOpts = map[string]map[string]string{}
			}
			if extOpts[name] == nil {
				extOpts[name] = map[string]string{}
			}
			extOpts[name][key] = v[0]
		}
		if key, ok := strings.CutPrefix(k, OptionAxisField); ok && key != "" && len(v) > 0 && strings.TrimSpace(v[0]) != "" {
			if optionAxes == nil {
				optionAxes = map[string]string{}
			}
			optionAxes[key] = v[0]
		}
	}
	return FormInput{
		OptionAxes: optionAxes, ExternalOptions: extOpts,
		Name: one("name"), DatasetMode: one("dataset_mode"), Dataset: one("dataset"),
		Preset: one("preset"), NewDataset: one("new_dataset"), Variants: vals["variants"],
		MemLimits: one("mem_limits"), Dims: one("dims"), Batches: one("batches"),
		Model: one("model"), Fanouts: one("fanouts"), Compute: one("compute"), Epochs: one("epochs"), Repeats: one("repeats"),
		Frontier: one("frontier") != "", RunOrder: one("run_order"),
		SkipInfeasible: one("skip_infeasible") != "", Testbeds: vals[TestbedField], IDs: vals[IDsField],
	}, nil
}

// maxFormFields bounds the fields of a form (a grid form has about 15).
const maxFormFields = 1000

// formValues parses a form body by its content type.
func formValues(contentType string, body []byte) (url.Values, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil && contentType != "" {
		return nil, fmt.Errorf("form: content type %q: %v", units.Clip(contentType, 80), err)
	}
	switch mt {
	case "", "application/x-www-form-urlencoded":
		if n := bytes.Count(body, []byte("&")) + 1; n > maxFormFields {
			return nil, fmt.Errorf("form: %d fields, at most %d", n, maxFormFields)
		}
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("form: %v", err)
		}
		return vals, nil
	case "multipart/form-data":
		boundary := params["boundary"]
		if boundary == "" {
			return nil, errors.New("form: multipart/form-data without a boundary")
		}
		// The body is in memory already: the parser keeps every part there
		// (no temporary files), up to the body's own size.
		f, err := multipart.NewReader(bytes.NewReader(body), boundary).ReadForm(int64(len(body)) + 1)
		if err != nil {
			return nil, fmt.Errorf("form: %v", err)
		}
		defer f.RemoveAll()
		if len(f.File) > 0 {
			return nil, errors.New("form: file uploads are not accepted here")
		}
		n := 0
		for _, v := range f.Value {
			n += len(v)
		}
		if n > maxFormFields {
			return nil, fmt.Errorf("form: %d fields, at most %d", n, maxFormFields)
		}
		return url.Values(f.Value), nil
	}
	return nil, fmt.Errorf("form: content type %s is not a form (want application/x-www-form-urlencoded or multipart/form-data)", strings.ToLower(mt))
}

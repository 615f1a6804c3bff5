package grid

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"outcore/engine/vocab"
)

// internalName matches the internal field names messages must not use.
var internalName = regexp.MustCompile(`axes\.|\[\d+\]`)

// FuzzParseGrid: any bytes are refused with problems in words or give a
// grid within the limits whose cells match its count and whose JSON reads
// back into the same grid.
func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{
		`{"name":"x","dataset":"tiny","model":"sage","epochs":1,"axes":{"system":["fake","fake2"],"mem_limit":["256MiB","25%","none"],"repeat":2}}`,
		`{"dataset":"tiny","system":"fake","batch":64,"fanout":"5,5","mem_limit":268435456}`,
		`{"dataset":"tiny","axes":{"system":["a","b","c","d"],"repeat":4611686018427387904}}`,
		`{"dataset":"tiny","axes":{"fanout":[[10,5],"-1,-1"],"feature_dim":[16,32],"batch_size":[1,1048576]}}`,
		`{"dataset":"tiny","mem_share_of":"base","axes":{"feature_dim":[16,32],"mem_limit":["60%"]}}`,
		`{"dataset":"tiny","mem_share_of":["run"]}`,
		`{"dataset":"tiny","hidden":1000000000,"options":{"cache":"1e30"}}`,
		`{"dataset":"tiny","axes":{"mem_limit":[1e30,"-5MiB",true]}}`,
		`[]`, `null`, `{"axes":null}`,
		`{"dataset":"tiny","system":"fake","executor":"gridtest","gridtest":{"width":3}}`,
		`{"dataset":"tiny","system":"fake","executor":"gridtest","gridtest":{"width":-1,"depth":2}}`,
		`{"dataset":"tiny","system":"fake","weight_decay":1e308,"lr":0,"dropout":1,"queue_depth":1e9}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGrid(b)
		if err != nil {
			ps := ProblemsOf(err)
			if !errors.Is(err, ErrInvalid) || len(ps) == 0 {
				t.Fatalf("error without ProblemList: %v", err)
			}
			for _, p := range ps {
				if p.Message == "" {
					t.Fatalf("problem %+v", p)
				}
				// an internal path is one the input did not write: a
				// message may echo the input's own keys and values
				// ("axes.: not a setting", `{"":[[0]]} is not a value`)
				for _, m := range internalName.FindAllString(p.Message, -1) {
					if !bytes.Contains(b, []byte(m)) {
						t.Fatalf("problem %+v", p)
					}
				}
			}
			return
		}
		n := g.Count()
		if n < 1 || n > MaxRuns || len(g.Cells()) != n {
			t.Fatalf("count %d, %d cells", n, len(g.Cells()))
		}
		back, err := ParseGrid(g.JSON())
		if err != nil || back.Count() != n || back.Dataset != g.Dataset || back.Name != g.Name || back.MemShareOf != g.MemShareOf {
			t.Fatalf("JSON %s reads back as %+v, %v", g.JSON(), back, err)
		}
		// An executor's options block is kept as given (compacted), for
		// the executor to read again.
		for name, block := range g.ExecutorOptions {
			if !bytes.Equal(back.ExecutorOptions[name], block) {
				t.Fatalf("%s block %s reads back as %s", name, block, back.ExecutorOptions[name])
			}
		}
		cfg := vocab.DefaultConfig()
		for k, v := range g.Base {
			b, _ := json.Marshal(map[string]json.RawMessage{k: v})
			_ = json.Unmarshal(b, &cfg)
		}
		if !(cfg.LR > 0 && cfg.LR <= MaxLR) || cfg.WeightDecay < 0 || cfg.WeightDecay > MaxWeightDecay || cfg.Dropout < 0 || cfg.Dropout >= 1 {
			t.Fatalf("accepted lr %g, weight_decay %g, dropout %g", cfg.LR, cfg.WeightDecay, cfg.Dropout)
		}
	})
}

package store

import (
	"encoding/json"
	"strconv"

	"outcore/engine/metrics"
)

// The epochs table keeps a record's stage seconds and tier counts as JSON
// objects (stages_json: {"forward_s": 0.12, ...}; tiers_json: {"cpu":
// {"lookups": 10, "hits": 4}, ...}). Reading an experiment's epochs decodes
// tens of thousands of them, so the two flat shapes the store itself
// writes are read by a small scanner; anything else (other spacing,
// escapes, fields the scanner does not know) falls back to encoding/json,
// so the result is always what encoding/json would give.

// decodeStages decodes a stages_json object.
func decodeStages(s string) (map[string]float64, error) {
	if m, ok := scanFloatMap(s); ok {
		return m, nil
	}
	var m map[string]float64
	err := json.Unmarshal([]byte(s), &m)
	return m, err
}

// decodeTiers decodes a tiers_json object.
func decodeTiers(s string) (map[string]metrics.TierCount, error) {
	if m, ok := scanTierMap(s); ok {
		return m, nil
	}
	var m map[string]metrics.TierCount
	err := json.Unmarshal([]byte(s), &m)
	return m, err
}

// jscan reads the compact JSON encoding/json writes.
type jscan struct {
	s string
	i int
}

func (p *jscan) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads a string without escapes.
func (p *jscan) key() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			k := p.s[start:p.i]
			p.i++
			return k, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", false // escapes and non-ASCII: encoding/json decides
		}
		p.i++
	}
	return "", false
}

// number reads a JSON number as strconv would parse it.
func (p *jscan) number() (string, bool) {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i], p.i > start
}

func (p *jscan) float() (float64, bool) {
	n, ok := p.number()
	if !ok || !validJSONNumber(n) {
		return 0, false
	}
	v, err := strconv.ParseFloat(n, 64)
	return v, err == nil
}

func (p *jscan) int() (int64, bool) {
	n, ok := p.number()
	if !ok || !validJSONNumber(n) {
		return 0, false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	return v, err == nil
}

// validJSONNumber checks JSON's number grammar (strconv accepts more:
// "+1", "1.", ".5", "0x1p3", "inf").
func validJSONNumber(n string) bool {
	i := 0
	if i < len(n) && n[i] == '-' {
		i++
	}
	digits := func() int {
		k := 0
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
			k++
		}
		return k
	}
	if i < len(n) && n[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(n) && n[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(n)
}

// object reads {"k": v, ...} calling value for each key; ok is false on
// anything but that compact shape, or a repeated key.
func (p *jscan) object(value func(k string) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	seen := map[string]bool{}
	for {
		k, ok := p.key()
		if !ok || seen[k] || !p.eat(':') || !value(k) {
			return false
		}
		seen[k] = true
		if p.eat('}') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

func scanFloatMap(s string) (map[string]float64, bool) {
	m := map[string]float64{}
	p := &jscan{s: s}
	ok := p.object(func(k string) bool {
		v, ok := p.float()
		m[k] = v
		return ok
	})
	return m, ok && p.i == len(s)
}

func scanTierMap(s string) (map[string]metrics.TierCount, bool) {
	m := map[string]metrics.TierCount{}
	p := &jscan{s: s}
	ok := p.object(func(k string) bool {
		var tc metrics.TierCount
		ok := p.object(func(f string) bool {
			v, ok := p.int()
			switch f {
			case "lookups":
				tc.Lookups = v
			case "hits":
				tc.Hits = v
			default:
				return false
			}
			return ok
		})
		m[k] = tc
		return ok
	})
	return m, ok && p.i == len(s)
}

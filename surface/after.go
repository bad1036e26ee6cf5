package surface

import (
	"encoding/json"
	"sort"
)

// observe reports what changed on the target record and in the state
// between the view before an invoke and now, the page read again after it,
// within the Limits of an observation. It returns nil when nothing observable changed.
func (s *Surface) observe(before *View, target *Record, now *View) *Observation {
	lim := s.opts.Limits
	obs := &Observation{}
	if target != nil {
		if after := findRecord(now.Records, target.ID); after == nil {
			obs.Records = append(obs.Records, ObservedRecord{ID: target.ID, Removed: true})
		} else if fields, omitted := diffMaps(target.Fields, after.Fields, lim.MaxAfterFields); len(fields) > 0 {
			obs.Records = append(obs.Records, ObservedRecord{ID: target.ID, Fields: fields, FieldsOmitted: omitted})
		}
		if len(obs.Records) > lim.MaxAfterRecords {
			obs.RecordsOmitted = len(obs.Records) - lim.MaxAfterRecords
			obs.Records = obs.Records[:lim.MaxAfterRecords]
		}
	}
	obs.State, obs.StateOmitted = diffMaps(before.State, now.State, lim.MaxAfterState)
	if len(obs.Records) == 0 && len(obs.State) == 0 {
		return nil
	}
	return obs
}

// diffMaps returns the keys of b that differ from a (a key gone from b maps
// to nil), at most n of them in key order, and how many more were left out.
func diffMaps(a, b map[string]any, n int) (map[string]any, int) {
	var small [8]string // most diffs name a few keys: no allocation for the list
	keys := small[:0]
	for k, bv := range b {
		if av, ok := a[k]; !ok || !sameValue(av, bv) {
			keys = append(keys, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, 0
	}
	sort.Strings(keys)
	omitted := 0
	if len(keys) > n {
		omitted = len(keys) - n
		keys = keys[:n]
	}
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = b[k] // nil when removed
	}
	return out, omitted
}

// sameValue is reflect.DeepEqual for the values a view holds. JSON trees
// (what a decoded view holds) are compared without reflection; a pair with
// anything else in it, or nested deeper than a decoded document can be (a
// cyclic Go value), is left whole to deepEqualStd: reflect.DeepEqual
// natively; under js/wasm, where every view is decoded from JSON text and
// reflect is not linked for this, "differs".
func sameValue(a, b any) bool {
	same, ok := sameTree(a, b, 0)
	if !ok {
		return deepEqualStd(a, b)
	}
	return same
}

// sameTree compares two JSON trees; ok is false when it met something
// else.
func sameTree(a, b any, depth int) (same, ok bool) {
	if depth > maxSameDepth {
		return false, false
	}
	switch x := a.(type) {
	case string:
		y, isStr := b.(string)
		return isStr && x == y, isStr || isTree(b)
	case json.Number:
		y, isNum := b.(json.Number)
		return isNum && x == y, isNum || isTree(b)
	case bool:
		y, isBool := b.(bool)
		return isBool && x == y, isBool || isTree(b)
	case nil:
		return b == nil, b == nil || isTree(b)
	case map[string]any:
		y, isMap := b.(map[string]any)
		if !isMap || (x == nil) != (y == nil) || len(x) != len(y) {
			return false, isMap || isTree(b)
		}
		for k, xv := range x {
			yv, has := y[k]
			if !has {
				return false, true
			}
			if same, ok := sameTree(xv, yv, depth+1); !ok || !same {
				return false, ok
			}
		}
		return true, true
	case []any:
		y, isList := b.([]any)
		if !isList || (x == nil) != (y == nil) || len(x) != len(y) {
			return false, isList || isTree(b)
		}
		for i := range x {
			if same, ok := sameTree(x[i], y[i], depth+1); !ok || !same {
				return false, ok
			}
		}
		return true, true
	}
	return false, false
}

// isTree reports whether v is a node of a JSON tree, at its top level.
func isTree(v any) bool {
	switch v.(type) {
	case nil, string, json.Number, bool, map[string]any, []any:
		return true
	}
	return false
}

// maxSameDepth is deeper than a decoded document nests (10000 levels).
const maxSameDepth = 10001

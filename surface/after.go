package surface

import (
	"encoding/json"
	"reflect"
	"sort"
)

// observe reports what changed on the target record and in the state
// between the view before an invoke and now, the page read again after it,
// within AfterLimits. It returns nil when nothing observable changed.
func (s *Surface) observe(before *View, target *Record, now *View) *Observation {
	lim := s.opts.After
	obs := &Observation{}
	if target != nil {
		if after := findRecord(now.Records, target.ID); after == nil {
			obs.Records = append(obs.Records, ObservedRecord{ID: target.ID, Removed: true})
		} else if fields, omitted := diffMaps(target.Fields, after.Fields, lim.MaxFields); len(fields) > 0 {
			obs.Records = append(obs.Records, ObservedRecord{ID: target.ID, Fields: fields, FieldsOmitted: omitted})
		}
		if len(obs.Records) > lim.MaxRecords {
			obs.RecordsOmitted = len(obs.Records) - lim.MaxRecords
			obs.Records = obs.Records[:lim.MaxRecords]
		}
	}
	obs.State, obs.StateOmitted = diffMaps(before.State, now.State, lim.MaxState)
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

// sameValue is reflect.DeepEqual for the values a JSON-decoded registry
// holds, without reflection for the common leaves.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

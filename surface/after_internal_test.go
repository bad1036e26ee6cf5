package surface

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// sameValue must answer what reflect.DeepEqual answers, for JSON trees and
// for the other values a native registry may put in a view.
func TestSameValueIsDeepEqual(t *testing.T) {
	nan := math.NaN()
	shared := map[string]any{"x": nan}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cyclic2 := map[string]any{}
	cyclic2["self"] = cyclic2
	values := []any{
		nil, "", "a", json.Number("1"), json.Number("1.0"), true, false,
		map[string]any(nil), map[string]any{}, map[string]any{"a": nil}, map[string]any{"a": "x"}, map[string]any{"b": "x"},
		map[string]any{"a": []any{json.Number("1"), map[string]any{"c": false}}},
		[]any(nil), []any{}, []any{nil}, []any{"x", json.Number("2")}, []any{"x", json.Number("2.0")},
		1, 1.0, nan, int64(1), []string{"a"}, map[string]string{"a": "x"}, shared, cyclic, cyclic2,
		map[string]any{"a": 1.5}, []any{1.5}, map[string]any{"a": map[string]any(nil)},
	}
	for _, a := range values {
		for _, b := range values {
			if got, want := sameValue(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("sameValue(%#v, %#v) = %v, reflect.DeepEqual says %v", a, b, got, want)
			}
		}
	}
	// Trees built apart compare by content.
	a := map[string]any{"k": []any{"v", json.Number("3"), map[string]any{"z": nil}}}
	b := map[string]any{"k": []any{"v", json.Number("3"), map[string]any{"z": nil}}}
	if !sameValue(a, b) {
		t.Error("equal trees differ")
	}
}

//go:build js && wasm

package hostbridge

import (
	"encoding/json"
	"math"
	"strconv"

	"pling.dev/agent/surface"
)

// parseDescribeInput reads the input of a direct describe() call with the
// same rules the kernel applies to a describe request's input: known
// fields only, record as one id or 1 to 20 ids, offset and limit as
// non-negative safe integers, capabilities "full" or "changed".
func parseDescribeInput(data []byte, maxBytes int) (surface.DescribeInput, *surface.Error) {
	var in surface.DescribeInput
	if len(data) == 0 {
		return in, nil
	}
	if len(data) > maxBytes {
		return in, invalid("describe input is larger than the size limit")
	}
	if hasLoneSurrogate(data) {
		return in, invalid("describe input is not valid JSON")
	}
	raw, err := parseTree(data)
	if err != nil {
		return in, invalid("describe input is not valid JSON")
	}
	if raw == nil {
		return in, nil // describe(null) reads like describe()
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return in, invalid("describe input must be an object")
	}
	for k, v := range obj {
		switch k {
		case "record":
			ids, err := recordSelection(v)
			if err != nil {
				return in, err
			}
			in.Records = ids
		case "offset", "limit":
			n, ok := safeIndex(v)
			if !ok {
				return in, invalid(k + " must be a non-negative integer")
			}
			if k == "offset" {
				in.Offset = &n
			} else {
				in.Limit = &n
			}
		case "capabilities":
			switch v {
			case "full":
			case "changed":
				in.Changed = true
			default:
				return in, invalid(`capabilities must be "full" or "changed"`)
			}
		default:
			return in, invalid("unknown describe input field " + strconv.Quote(k))
		}
	}
	if in.Records != nil && (in.Offset != nil || in.Limit != nil) {
		return in, invalid("record cannot be combined with offset or limit")
	}
	return in, nil
}

func invalid(msg string) *surface.Error {
	return &surface.Error{Code: surface.CodeInvalidRequest, Message: msg}
}

func recordSelection(v any) ([]string, *surface.Error) {
	switch t := v.(type) {
	case string:
		if t == "" {
			return nil, invalid("record must be a non-empty string")
		}
		return []string{t}, nil
	case []any:
		if len(t) == 0 || len(t) > surface.MaxRecordSelection {
			return nil, invalid("record must list 1 to 20 ids")
		}
		ids := make([]string, 0, len(t))
		seen := make(map[string]bool, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, invalid("record ids must be non-empty strings")
			}
			if !seen[s] {
				seen[s] = true
				ids = append(ids, s)
			}
		}
		return ids, nil
	}
	return nil, invalid("record must be a string or an array of strings")
}

// safeIndex accepts a non-negative integer a JavaScript caller can write
// exactly (3 and 3.0 alike), never 1.5, -1, "3" or 1e400.
func safeIndex(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > 1<<53-1 {
		return 0, false
	}
	return int(f), true
}

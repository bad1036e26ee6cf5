package schema

import (
	"encoding/base64"

	"pling.dev/agent/internal/jsonread"
)

// contentCheck is what draft-07 asserts with contentEncoding and
// contentMediaType, for the one encoding and the one media type the
// previous validator knew; others stay annotations there. Later dialects
// make both keywords annotations.
type contentCheck struct {
	base64 bool // contentEncoding "base64": the string must decode
	// json: the content must be JSON. The content is the string itself
	// without contentEncoding, the decoded bytes with "base64" (checked
	// only when they decode), and nothing with another encoding, which
	// cannot be decoded.
	json bool
}

func newContentCheck(m map[string]any) *contentCheck {
	enc, hasEnc := m["contentEncoding"].(string)
	media, _ := m["contentMediaType"].(string)
	c := &contentCheck{
		base64: enc == "base64",
		json:   media == "application/json" && (!hasEnc || enc == "base64"),
	}
	if !c.base64 && !c.json {
		return nil
	}
	return c
}

// check returns the failing keyword and its message, "" when s passes.
func (c *contentCheck) check(s string) (keyword, msg string) {
	data := []byte(s)
	if c.base64 {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "contentEncoding", "value is not base64 encoded"
		}
		data = b
	}
	if c.json {
		// What json.Unmarshal into an any accepts: one value whose
		// numbers fit a float64.
		r := jsonread.New(data)
		r.Floats = true
		r.Value()
		if !r.End() {
			return "contentMediaType", "value is not of mediatype 'application/json'"
		}
	}
	return "", ""
}

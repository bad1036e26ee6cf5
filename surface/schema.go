package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// schemaCache compiles each distinct input schema once. Entries are keyed by
// the schema's bytes, so a page that changes a schema gets a fresh compile
// and one that re-renders an identical schema costs a map lookup.
type schemaCache struct {
	max int

	mu      sync.Mutex
	entries map[string]*compiled
}

type compiled struct {
	schema *jsonschema.Schema // nil when the schema did not compile
	err    error
}

func newSchemaCache(max int) *schemaCache {
	return &schemaCache{max: max, entries: make(map[string]*compiled)}
}

// errNoRemoteRefs stops the compiler from fetching anything: a page's schema
// must be self-contained, and the kernel has no network or file system.
var errNoRemoteRefs = errors.New("remote $ref is not allowed")

// schemaURL is absolute because jsonschema resolves relative URLs against
// the working directory, which does not exist under GOOS=js.
const schemaURL = "urn:pling:surface:input-schema"

// get returns the compiled schema for raw. An empty raw schema accepts any
// object and is represented by a nil schema with a nil error.
func (c *schemaCache) get(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	e, ok := c.entries[string(raw)] // no copy of raw for a lookup
	c.mu.Unlock()
	if ok {
		return e.schema, e.err
	}
	key := string(raw)
	s, err := compileSchema(raw)
	c.mu.Lock()
	if len(c.entries) >= c.max {
		// Drop everything rather than track recency: schemas are few and
		// stable, so a full cache means churn, and a recompile is cheap
		// next to an unbounded map.
		clear(c.entries)
	}
	c.entries[key] = &compiled{schema: s, err: err}
	c.mu.Unlock()
	return s, err
}

func compileSchema(raw json.RawMessage) (s *jsonschema.Schema, err error) {
	defer func() {
		// The compiler panics on some malformed inputs (a pattern that
		// passes the metaschema but not regexp, for instance). A schema that
		// panics is a schema that does not compile.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("schema compiler panicked: %v", r)
		}
	}()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errNoRemoteRefs }
	if err := c.AddResource(schemaURL, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// validateInput checks input against s and turns a failure into violations
// (leaf causes only, sorted by path, at most maxViolations).
func validateInput(s *jsonschema.Schema, input map[string]any) (vs []Violation, err error) {
	if s == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			vs, err = nil, fmt.Errorf("schema validation panicked: %v", r)
		}
	}()
	verr := s.Validate(input)
	if verr == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return nil, verr
	}
	collectViolations(ve, &vs)
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].InstancePath < vs[j].InstancePath })
	if len(vs) > maxViolations {
		vs = vs[:maxViolations]
	}
	return vs, nil
}

const maxViolations = 16

func collectViolations(ve *jsonschema.ValidationError, out *[]Violation) {
	if len(ve.Causes) == 0 {
		*out = append(*out, Violation{
			InstancePath: ve.InstanceLocation,
			Keyword:      lastKeyword(ve.KeywordLocation),
			Message:      ve.Message,
		})
		return
	}
	for _, c := range ve.Causes {
		collectViolations(c, out)
	}
}

// lastKeyword returns the keyword a keyword location ends in:
// "/properties/note/type" -> "type".
func lastKeyword(loc string) string {
	if i := strings.LastIndexByte(loc, '/'); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

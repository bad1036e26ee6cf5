package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"sync"

	"pling.dev/agent/internal/sprint"
	"pling.dev/agent/surface/internal/schema"
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
	schema *schema.Schema // nil when the schema did not compile
	err    error
}

func newSchemaCache(max int) *schemaCache {
	return &schemaCache{max: max, entries: make(map[string]*compiled)}
}

// get returns the compiled schema for raw. An empty raw schema accepts any
// object and is represented by a nil schema with a nil error.
func (c *schemaCache) get(raw json.RawMessage) (*schema.Schema, error) {
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

func compileSchema(raw json.RawMessage) (s *schema.Schema, err error) {
	defer func() {
		// A compiler bug must cost one capability, not the page: a schema
		// that panics is a schema that does not compile.
		if r := recover(); r != nil {
			s, err = nil, errors.New("schema compiler panicked: "+sprint.Sprint(r))
		}
	}()
	// schema.Compile refuses remote references: a page's schema must be
	// self-contained, and the kernel has no network or file system.
	return schema.Compile(raw)
}

// validateInput checks input against s and turns a failure into violations
// (leaf causes only, sorted by path, at most maxViolations).
func validateInput(s *schema.Schema, input map[string]any) (vs []Violation, err error) {
	if s == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			vs, err = nil, errors.New("schema validation panicked: "+sprint.Sprint(r))
		}
	}()
	found := s.Validate(input)
	if len(found) == 0 {
		return nil, nil
	}
	vs = make([]Violation, len(found))
	for i, f := range found {
		vs[i] = Violation{InstancePath: f.InstancePath, Keyword: f.Keyword, Message: f.Message}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].InstancePath < vs[j].InstancePath })
	if len(vs) > maxViolations {
		vs = vs[:maxViolations]
	}
	return vs, nil
}

const maxViolations = 16

package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"slices"

	"pling.dev/agent/surface"
)

// maxKnownIDs bounds the record ids a client remembers. Past it the local
// record check stops refusing ids it has not seen and leaves the decision to
// the surface, which is the authority anyway.
const maxKnownIDs = 100_000

// observe records what a description taught the client: the full capability
// list (or fills d with it when the surface reports it unchanged) and the
// record ids it offered.
func (c *Client) observe(d *Description) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.CapabilitiesUnchanged {
		d.Capabilities = slices.Clone(c.caps)
	} else {
		c.caps = slices.Clone(d.Capabilities)
	}
	if !c.haveRoute || d.Context.Route != c.route {
		// Another view: the ids of the last one say nothing here.
		c.route, c.haveRoute = d.Context.Route, true
		clear(c.known)
		c.knownFull = false
	}
	add := func(id string) {
		if len(c.known) >= maxKnownIDs {
			c.knownFull = true
			return
		}
		c.known[id] = struct{}{}
	}
	for _, id := range d.Context.RecordIDs {
		add(id)
	}
	for _, r := range d.Context.Records {
		add(r.ID)
	}
	c.idsComplete = d.Context.RecordIDsTotal <= len(d.Context.RecordIDs)
}

// SyncCapabilities describes with capabilities: "changed" and no record
// window, and reports whether the capability list differs from the one the
// previous SyncCapabilities returned (the first call reports true). The
// description always carries the full current list. An MCP facade calls it
// to decide when to send tools/list_changed.
//
// The surface remembers the last list per session, so this relies on the
// session being described only through this client.
func (c *Client) SyncCapabilities(ctx context.Context) (*Description, bool, error) {
	d, err := c.Describe(ctx, DescribeInput{Changed: true, Limit: new(0)})
	if err != nil {
		return nil, false, err
	}
	sig := signature(d.Capabilities)
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := !c.reported || sig != c.reportedSig
	c.reported, c.reportedSig = true, sig
	return d, changed, nil
}

// signature fingerprints a capability list: equal lists, equal signatures.
func signature(caps []surface.Capability) string {
	b, _ := json.Marshal(caps)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// InvokeRecord invokes a folded per-record template on one record. It takes
// the template's record parameter from the capability list this client last
// received (describing once first if it has none) and puts recordID there;
// input holds the business input only, in any form Invoke accepts.
//
// Before anything is sent it checks recordID against the record ids the
// surface offered on the current route: an id never offered fails with
// ErrUnknownRecord. When the last description listed only some of the ids,
// an id not seen yet is looked up with one describe of that record.
func (c *Client) InvokeRecord(ctx context.Context, capability, recordID string, input any, opts InvokeOptions) (*Result, error) {
	if capability == "" || recordID == "" {
		return nil, fmt.Errorf("%w: capability and record id must not be empty", ErrInvalidInput)
	}
	in, err := encodeInput(input)
	if err != nil {
		return nil, err
	}
	param, err := c.recordParam(ctx, capability)
	if err != nil {
		return nil, err
	}
	if err := c.checkRecord(ctx, recordID); err != nil {
		return nil, err
	}
	if in, err = withMember(in, param, recordID); err != nil {
		return nil, err
	}
	return c.invoke(ctx, capability, in, opts)
}

func (c *Client) recordParam(ctx context.Context, capability string) (string, error) {
	c.mu.Lock()
	have := c.caps != nil
	c.mu.Unlock()
	if !have {
		if _, err := c.Describe(ctx, DescribeInput{}); err != nil {
			return "", err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cp := range c.caps {
		if cp.ID != capability {
			continue
		}
		if cp.Record == nil {
			return "", fmt.Errorf("%w: %s takes no record", ErrNotTemplate, brief(capability))
		}
		return cp.Record.Param, nil
	}
	return "", fmt.Errorf("%w: %s is not in the last capability list", ErrNotTemplate, brief(capability))
}

func (c *Client) checkRecord(ctx context.Context, id string) error {
	c.mu.Lock()
	_, known := c.known[id]
	complete := c.idsComplete && !c.knownFull
	c.mu.Unlock()
	if known {
		return nil
	}
	if !complete {
		d, err := c.Describe(ctx, DescribeInput{Records: []string{id}, Changed: true})
		if err != nil {
			return err
		}
		for _, r := range d.Context.Records {
			if r.ID == id {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: the surface did not offer record %s", ErrUnknownRecord, brief(id))
}

// withMember returns the object in (nil: {}) with key set to value. A key
// already present with another value is refused rather than overwritten.
func withMember(in json.RawMessage, key, value string) (json.RawMessage, error) {
	k, _ := json.Marshal(key)
	v, _ := json.Marshal(value)
	if in == nil {
		in = json.RawMessage("{}")
	}
	if m, _ := members(in); m != nil {
		if old, present := m[key]; present {
			if s, ok := str(old); ok && s == value {
				return in, nil
			}
			return nil, fmt.Errorf("%w: input.%s names another record", ErrInvalidInput, key)
		}
	}
	rest := bytes.TrimSpace(in[1:]) // in is an object: it starts with '{'
	out := append(append(append([]byte{'{'}, k...), ':'), v...)
	if rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, rest...)
	if detail := scanJSON(out); detail != "" {
		return nil, fmt.Errorf("%w: %s", ErrInvalidInput, detail) // a case variant of key, say
	}
	return out, nil
}

// Records iterates over the records of the page's active region, page by
// page through describe's offset and limit (pageSize records a page; 0 or
// less: the surface's default), until it reaches recordsTotal as the latest
// page reports it. A failure ends the iteration with a non-nil error, as do
// a route change while paging, an empty page short of the total (the
// table changed under the pager) and, with ErrRecordLimit, reading
// Options.MaxRecords records short of it: a page cannot keep the loop
// going by claiming more. The records become known to InvokeRecord.
//
//	for rec, err := range c.Records(ctx, 50) {
//		if err != nil { ... }
//		...
//	}
func (c *Client) Records(ctx context.Context, pageSize int) iter.Seq2[surface.RecordView, error] {
	return func(yield func(surface.RecordView, error) bool) {
		offset, route, max := 0, "", c.opts.MaxRecords
		for page := 0; ; page++ {
			in := DescribeInput{Offset: new(offset), Changed: true}
			if pageSize > 0 {
				in.Limit = new(pageSize)
				if max > 0 {
					in.Limit = new(min(pageSize, max-offset))
				}
			}
			d, err := c.Describe(ctx, in)
			if err != nil {
				yield(surface.RecordView{}, err)
				return
			}
			if page == 0 {
				route = d.Context.Route
			} else if d.Context.Route != route {
				yield(surface.RecordView{}, fmt.Errorf("client: records: the page moved from route %s to %s while paging", brief(route), brief(d.Context.Route)))
				return
			}
			for _, r := range d.Context.Records {
				if max > 0 && offset == max {
					break // a page larger than asked for
				}
				if !yield(r, nil) {
					return
				}
				offset++
			}
			if offset >= d.Context.RecordsTotal {
				return
			}
			if max > 0 && offset >= max {
				yield(surface.RecordView{}, fmt.Errorf("%w: read %d of %d", ErrRecordLimit, offset, d.Context.RecordsTotal))
				return
			}
			if len(d.Context.Records) == 0 {
				yield(surface.RecordView{}, fmt.Errorf("client: records: no records at offset %d of %d", offset, d.Context.RecordsTotal))
				return
			}
		}
	}
}

package surface

import (
	"encoding/json"
	"slices"

	"pling.dev/agent/internal/jsonwrite"
)

// AppendJSON appends the JSON encoding of v to dst and returns the extended
// buffer. The bytes are exactly what encoding/json.Marshal(v) produces (the
// same field order, omissions, sorted map keys, number forms and escapes,
// including \u003c, \u003e, \u0026, \u2028 and \u2029), and it fails where
// Marshal fails.
//
// It exists because encoding/json works by reflection, which costs about
// five times more under WebAssembly than natively, and the kernel encodes a
// response on every request. The wire types of this package (Response,
// Description, Error, Observation, AuditEvent, CallContext, ViewQuery) and
// plain JSON trees (map[string]any, []any, string, json.Number, bool, nil,
// numbers, json.RawMessage) are written directly; any other value is handed
// to encoding/json. Under js/wasm, where encoding/json is not linked (see
// stdjson.go), such a value is an error instead.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	w := wire{Writer: jsonwrite.Writer{B: dst}}
	w.value(v)
	if w.err != nil {
		return dst, w.err
	}
	if w.Slow {
		// Something the direct path does not reproduce exactly (an invalid
		// json.RawMessage, a time outside RFC 3339): let encoding/json decide.
		b, err := marshalStd(v)
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	return w.B, nil
}

// wire writes the protocol's shapes and JSON trees. err is a failure
// encoding/json also reports; Slow means the value needs encoding/json to
// be encoded exactly.
type wire struct {
	jsonwrite.Writer
	err error
	// shared is where a cached capability list was spliced in, if one was.
	shared SharedCaps
}

// value writes one value of any type.
func (w *wire) value(v any) {
	switch x := v.(type) {
	case nil:
		w.Raw("null")
	case string:
		w.Str(x)
	case bool:
		w.Bool(x)
	case json.Number:
		w.Number(x)
	case float64:
		w.Float(x, 64)
	case float32:
		w.Float(float64(x), 32)
	case int:
		w.Int(int64(x))
	case int64:
		w.Int(x)
	case int32:
		w.Int(int64(x))
	case uint64:
		w.Uint(x)
	case map[string]any:
		w.object(x)
	case []any:
		w.array(x)
	case []string:
		w.Strings(x)
	case json.RawMessage:
		w.RawMessage(x)
	case *Response:
		if x == nil {
			w.Raw("null")
		} else {
			w.response(x)
		}
	case *Description:
		if x == nil {
			w.Raw("null")
		} else {
			w.description(x)
		}
	case *Error:
		if x == nil {
			w.Raw("null")
		} else {
			w.error(x)
		}
	case *Observation:
		if x == nil {
			w.Raw("null")
		} else {
			w.observation(x)
		}
	case AuditEvent:
		w.auditEvent(&x)
	case *AuditEvent:
		if x == nil {
			w.Raw("null")
		} else {
			w.auditEvent(x)
		}
	case CallContext:
		w.callContext(&x)
	case ViewQuery:
		w.viewQuery(&x)
	default:
		b, err := marshalStd(v)
		if err != nil {
			w.err = err
			return
		}
		w.B = append(w.B, b...)
	}
}

func (w *wire) object(m map[string]any) {
	if m == nil {
		w.Raw("null")
		return
	}
	w.B = append(w.B, '{')
	if len(m) == 1 {
		for k, v := range m {
			w.Str(k)
			w.B = append(w.B, ':')
			w.value(v)
		}
		w.B = append(w.B, '}')
		return
	}
	// encoding/json sorts keys; small objects sort on the stack.
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.Str(k)
		w.B = append(w.B, ':')
		w.value(m[k])
	}
	w.B = append(w.B, '}')
}

func (w *wire) array(list []any) {
	if list == nil {
		w.Raw("null")
		return
	}
	w.B = append(w.B, '[')
	for i, v := range list {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.value(v)
	}
	w.B = append(w.B, ']')
}
func (w *wire) response(r *Response) {
	w.Raw(`{"protocol":`)
	w.Str(r.Protocol)
	w.Raw(`,"id":`)
	w.Str(r.ID)
	w.Raw(`,"ok":`)
	w.Bool(r.OK)
	if r.Result != nil {
		w.Raw(`,"result":`)
		w.value(r.Result)
	}
	if r.After != nil {
		w.Raw(`,"after":`)
		w.observation(r.After)
	}
	if r.Error != nil {
		w.Raw(`,"error":`)
		w.error(r.Error)
	}
	w.B = append(w.B, '}')
}

func (w *wire) description(d *Description) {
	w.Raw(`{"protocol":`)
	w.Str(d.Protocol)
	w.OptStr(`,"app":`, d.App)
	w.Raw(`,"capabilities":`)
	if d.capsJSON != nil && len(d.Capabilities) == d.capsLen {
		start := len(w.B)
		w.B = append(w.B, d.capsJSON...)
		if d.capsID != 0 {
			w.shared = SharedCaps{ID: d.capsID, Start: start, End: len(w.B)}
		}
	} else {
		w.capabilities(d.Capabilities)
	}
	w.OptInt(`,"capabilitiesTotal":`, int64(d.CapabilitiesTotal))
	if d.CapabilitiesUnchanged {
		w.Raw(`,"capabilitiesUnchanged":true`)
	}
	w.Raw(`,"context":`)
	w.context(&d.Context)
	w.B = append(w.B, '}')
}

func (w *wire) capabilities(caps []Capability) {
	if caps == nil {
		w.Raw("null")
		return
	}
	w.B = append(w.B, '[')
	for i := range caps {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.capability(&caps[i])
	}
	w.B = append(w.B, ']')
}

func (w *wire) capability(c *Capability) {
	w.Raw(`{"id":`)
	w.Str(c.ID)
	w.OptStr(`,"description":`, c.Description)
	if len(c.InputSchema) > 0 {
		w.Raw(`,"inputSchema":`)
		w.RawMessage(c.InputSchema)
	}
	w.OptStr(`,"effect":`, c.Effect)
	w.OptStr(`,"approval":`, c.Approval)
	w.OptStr(`,"fidelity":`, c.Fidelity)
	w.OptStr(`,"source":`, c.Source)
	if len(c.ScopePath) > 0 {
		w.Raw(`,"scopePath":`)
		w.Strings(c.ScopePath)
	}
	w.OptStr(`,"handoff":`, c.Handoff)
	if len(c.FlowSteps) > 0 {
		w.Raw(`,"flowSteps":`)
		w.Strings(c.FlowSteps)
	}
	if c.Offscreen {
		w.Raw(`,"offscreen":true`)
	}
	if r := c.Record; r != nil {
		w.Raw(`,"record":{"param":`)
		w.Str(r.Param)
		w.Raw(`,"total":`)
		w.Int(int64(r.Total))
		w.OptInt(`,"offscreen":`, int64(r.Offscreen))
		w.B = append(w.B, '}')
	}
	w.B = append(w.B, '}')
}

func (w *wire) context(c *Context) {
	w.B = append(w.B, '{')
	if c.Route != "" {
		w.Raw(`"route":`)
		w.Str(c.Route)
		w.B = append(w.B, ',')
	}
	w.Raw(`"regions":`)
	if c.Regions == nil {
		w.Raw("null")
	} else {
		w.B = append(w.B, '[')
		for i := range c.Regions {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			r := &c.Regions[i]
			w.Raw(`{"id":`)
			w.Str(r.ID)
			w.OptStr(`,"label":`, r.Label)
			w.OptStr(`,"description":`, r.Description)
			w.B = append(w.B, '}')
		}
		w.B = append(w.B, ']')
	}
	w.OptInt(`,"regionsTotal":`, int64(c.RegionsTotal))
	w.Raw(`,"records":`)
	if c.Records == nil {
		w.Raw("null")
	} else {
		w.B = append(w.B, '[')
		for i := range c.Records {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			r := &c.Records[i]
			w.Raw(`{"id":`)
			w.Str(r.ID)
			w.OptStr(`,"kind":`, r.Kind)
			if len(r.Fields) > 0 {
				w.Raw(`,"fields":`)
				w.object(r.Fields)
			}
			if r.Offscreen {
				w.Raw(`,"offscreen":true`)
			}
			w.B = append(w.B, '}')
		}
		w.B = append(w.B, ']')
	}
	w.Raw(`,"recordIds":`)
	w.Strings(c.RecordIDs)
	w.Raw(`,"recordIdsTotal":`)
	w.Int(int64(c.RecordIDsTotal))
	w.Raw(`,"state":`)
	w.object(c.State)
	w.OptInt(`,"stateTotal":`, int64(c.StateTotal))
	w.Raw(`,"feedback":`)
	if c.Feedback == nil {
		w.Raw("null")
	} else {
		w.B = append(w.B, '[')
		for i := range c.Feedback {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			f := &c.Feedback[i]
			w.B = append(w.B, '{')
			if f.Level != "" {
				w.Raw(`"level":`)
				w.Str(f.Level)
				w.B = append(w.B, ',')
			}
			w.Raw(`"message":`)
			w.Str(f.Message)
			w.OptStr(`,"record":`, f.Record)
			w.B = append(w.B, '}')
		}
		w.B = append(w.B, ']')
	}
	w.Raw(`,"unavailable":`)
	if c.Unavailable == nil {
		w.Raw("null")
	} else {
		w.B = append(w.B, '[')
		for i := range c.Unavailable {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			u := &c.Unavailable[i]
			w.Raw(`{"id":`)
			w.Str(u.ID)
			w.OptStr(`,"reason":`, u.Reason)
			w.B = append(w.B, '}')
		}
		w.B = append(w.B, ']')
	}
	w.Raw(`,"recordsTotal":`)
	w.Int(int64(c.RecordsTotal))
	w.Raw(`,"feedbackTotal":`)
	w.Int(int64(c.FeedbackTotal))
	w.Raw(`,"unavailableTotal":`)
	w.Int(int64(c.UnavailableTotal))
	w.B = append(w.B, '}')
}

func (w *wire) error(e *Error) {
	w.Raw(`{"code":`)
	w.Str(string(e.Code))
	w.Raw(`,"message":`)
	w.Str(e.Message)
	w.OptInt(`,"retryAfterMs":`, e.RetryAfterMs)
	if len(e.Violations) > 0 {
		w.Raw(`,"violations":[`)
		for i := range e.Violations {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			v := &e.Violations[i]
			w.Raw(`{"instancePath":`)
			w.Str(v.InstancePath)
			w.Raw(`,"keyword":`)
			w.Str(v.Keyword)
			w.Raw(`,"message":`)
			w.Str(v.Message)
			w.B = append(w.B, '}')
		}
		w.B = append(w.B, ']')
	}
	w.B = append(w.B, '}')
}

func (w *wire) observation(o *Observation) {
	// Every member may be omitted, so commas are placed as members come.
	w.B = append(w.B, '{')
	sep := ""
	if len(o.Records) > 0 {
		w.Raw(`"records":[`)
		for i := range o.Records {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			r := &o.Records[i]
			w.Raw(`{"id":`)
			w.Str(r.ID)
			if len(r.Fields) > 0 {
				w.Raw(`,"fields":`)
				w.object(r.Fields)
			}
			w.OptInt(`,"fieldsOmitted":`, int64(r.FieldsOmitted))
			if r.Removed {
				w.Raw(`,"removed":true`)
			}
			w.B = append(w.B, '}')
		}
		w.B = append(w.B, ']')
		sep = ","
	}
	if o.RecordsOmitted != 0 {
		w.Raw(sep + `"recordsOmitted":`)
		w.Int(int64(o.RecordsOmitted))
		sep = ","
	}
	if len(o.State) > 0 {
		w.Raw(sep + `"state":`)
		w.object(o.State)
		sep = ","
	}
	if o.StateOmitted != 0 {
		w.Raw(sep + `"stateOmitted":`)
		w.Int(int64(o.StateOmitted))
	}
	w.B = append(w.B, '}')
}

func (w *wire) auditEvent(ev *AuditEvent) {
	w.Raw(`{"requestId":`)
	w.Str(ev.RequestID)
	w.Raw(`,"method":`)
	w.Str(ev.Method)
	w.OptStr(`,"capability":`, ev.Capability)
	w.OptStr(`,"recordId":`, ev.RecordID)
	w.OptStr(`,"sessionId":`, ev.SessionID)
	w.OptStr(`,"agentId":`, ev.AgentID)
	w.OptStr(`,"userId":`, ev.UserID)
	w.OptStr(`,"delegationId":`, ev.DelegationID)
	w.Raw(`,"outcome":`)
	w.Str(string(ev.Outcome))
	w.OptStr(`,"code":`, ev.Code)
	w.OptStr(`,"approval":`, ev.Approval)
	w.Raw(`,"durationMs":`)
	w.Float(ev.DurationMs, 64)
	w.Raw(`,"time":`)
	w.Time(ev.Time)
	w.B = append(w.B, '}')
}
func (w *wire) callContext(c *CallContext) {
	w.Raw(`{"requestId":`)
	w.Str(c.RequestID)
	w.Raw(`,"capability":`)
	w.Str(c.Capability)
	w.OptStr(`,"record":`, c.Record)
	w.OptStr(`,"sessionId":`, c.SessionID)
	w.OptStr(`,"agentId":`, c.AgentID)
	w.OptStr(`,"userId":`, c.UserID)
	w.OptStr(`,"delegationId":`, c.DelegationID)
	w.B = append(w.B, '}')
}

func (w *wire) viewQuery(q *ViewQuery) {
	w.B = append(w.B, '{')
	if len(q.IDs) > 0 {
		w.Raw(`"ids":`)
		w.Strings(q.IDs)
		w.B = append(w.B, ',')
	}
	w.Raw(`"offset":`)
	w.Int(int64(q.Offset))
	w.Raw(`,"limit":`)
	w.Int(int64(q.Limit))
	w.Raw(`,"maxRecordIds":`)
	w.Int(int64(q.MaxRecordIDs))
	w.B = append(w.B, '}')
}

package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// handleInvoke runs steps 4-7 for invoke.
func (s *Surface) handleInvoke(ctx context.Context, ev *AuditEvent, req *request, sess *Session) *Response {
	id := req.ID
	// 4. method-specific fields.
	if perr := checkKnownFields(req.fields, "protocol", "id", "method", "capability", "input"); perr != nil {
		return s.reject(ev, id, perr)
	}
	capID, ok := req.fields["capability"].(string)
	if !ok || capID == "" {
		return s.reject(ev, id, newError(CodeInvalidRequest, "capability must be a non-empty string"))
	}
	ev.Capability = capID
	input := map[string]any{}
	if raw, present := req.fields["input"]; present {
		obj, ok := raw.(map[string]any)
		if !ok {
			return s.reject(ev, id, newError(CodeInvalidRequest, "invoke input must be an object"))
		}
		input = obj
	}

	// 5. capability, record, input, replay.
	q := ViewQuery{}
	if r, ok := input["record"].(string); ok && r != "" {
		q.IDs = []string{r} // the usual record parameter: read it in the same pass
	}
	view, perr := s.readView(ctx, q)
	if perr != nil {
		return s.reject(ev, id, perr)
	}
	ec := s.lookup(view, sess, capID)
	if ec == nil {
		return s.reject(ev, id, newError(CodeCapabilityNotExposed, "capability is not exposed to this session"))
	}
	action := capID
	var target *Record
	if t := ec.action.Record; t != nil {
		param := t.param()
		recID, ok := input[param].(string)
		if !ok || recID == "" {
			return s.reject(ev, id, newError(CodeInvalidRequest, "input."+param+" must name a record"))
		}
		ev.RecordID = recID
		if len(q.IDs) != 1 || q.IDs[0] != recID {
			if view, perr = s.readView(ctx, ViewQuery{IDs: []string{recID}}); perr != nil {
				return s.reject(ev, id, perr)
			}
		}
		target = findRecord(view.Records, recID)
		if target == nil || (t.Kind != "" && target.Kind != "" && target.Kind != t.Kind) {
			return s.reject(ev, id, newError(CodeInvalidRequest, "record is not referenceable"))
		}
		if action, ok = concreteAction(target, capID); !ok {
			return s.reject(ev, id, newError(CodeInvalidRequest, "capability does not apply to this record"))
		}
		// The record parameter is protocol, not business input.
		input = withoutKey(input, param)
	}
	vs, err := validateInput(ec.schema, input)
	if err != nil {
		return s.reject(ev, id, newError(CodeInternalError, "input could not be validated"))
	}
	if len(vs) > 0 {
		e := newError(CodeInvalidRequest, "input does not match the capability's schema")
		e.Violations = vs
		return s.reject(ev, id, e)
	}
	if s.guard != nil {
		key := ReplayKey{RequestID: id}
		if sess != nil {
			key.SessionID = sess.SessionID
		}
		d, err := callGuard(ctx, s.guard, key, s.now(), s.window)
		switch {
		case err != nil || (d != Claimed && d != Replayed):
			return s.reject(ev, id, newError(CodeReplayGuardUnavailable, "replay guard is unavailable"))
		case d == Replayed:
			return s.reject(ev, id, newError(CodeReplayDetected, "request id was already used in this session"))
		}
	}

	// 6. the page's executor, exactly once.
	args, err := AppendJSON(make([]byte, 0, 128), input)
	if err != nil {
		return s.reject(ev, id, newError(CodeInternalError, "input could not be encoded"))
	}
	call := Call{Action: action, Input: args, Context: CallContext{
		RequestID: id, Capability: capID, Record: ev.RecordID,
		SessionID: ev.SessionID, AgentID: ev.AgentID, UserID: ev.UserID, DelegationID: ev.DelegationID,
	}}
	raw, perr := s.execute(ctx, call)
	if perr != nil {
		return s.reject(ev, id, perr)
	}
	result, business, err := sanitizeResult(raw)
	if err != nil {
		return s.reject(ev, id, newError(CodeInternalError, "executor returned a result that is not JSON"))
	}

	// 7. bounded after, then audit.
	after := s.observe(ctx, view, target)
	outcome := OutcomeOK
	if business {
		outcome = OutcomeBusinessError
	}
	ev.Outcome = outcome
	return &Response{Protocol: Protocol, ID: id, OK: true, Result: result, After: after}
}

func findRecord(recs []Record, id string) *Record {
	for i := range recs {
		if recs[i].ID == id {
			return &recs[i]
		}
	}
	return nil
}

// concreteAction resolves the action a template runs for one record.
func concreteAction(r *Record, template string) (string, bool) {
	if r.Actions == nil {
		return template + ":" + r.ID, true
	}
	a, ok := r.Actions[template]
	return a, ok && a != ""
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

type execOutcome struct {
	result json.RawMessage
	err    error
}

// execute calls the executor once, with a deadline, containing panics. A
// call that outlives the deadline is abandoned with its context cancelled;
// its effect is unknown, which the INTERNAL_ERROR says without detail.
func (s *Surface) execute(ctx context.Context, call Call) (json.RawMessage, *Error) {
	if x, ok := s.opts.Execute.(TimedExecutor); ok {
		return s.executeTimed(ctx, x, call)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ExecuteTimeout)
	defer cancel()
	done := make(chan execOutcome, 1) // buffered: a late answer never blocks
	go func() {
		var out execOutcome
		defer func() {
			if r := recover(); r != nil {
				out = execOutcome{err: fmt.Errorf("executor panicked: %v", r)}
			}
			done <- out
		}()
		out.result, out.err = s.opts.Execute.Execute(ctx, call)
	}()
	select {
	case out := <-done:
		if out.err != nil {
			return nil, newError(CodeInternalError, "executor failed")
		}
		return out.result, nil
	case <-ctx.Done():
		return nil, newError(CodeInternalError, "executor did not answer in time")
	}
}

// executeTimed calls an executor that keeps the limit itself, on this
// goroutine, containing panics.
func (s *Surface) executeTimed(ctx context.Context, x TimedExecutor, call Call) (raw json.RawMessage, perr *Error) {
	defer func() {
		if r := recover(); r != nil {
			raw, perr = nil, newError(CodeInternalError, "executor failed")
		}
	}()
	raw, err := x.ExecuteTimed(ctx, call, s.opts.ExecuteTimeout)
	switch {
	case errors.Is(err, ErrExecuteTimeout):
		return nil, newError(CodeInternalError, "executor did not answer in time")
	case err != nil:
		return nil, newError(CodeInternalError, "executor failed")
	}
	return raw, nil
}

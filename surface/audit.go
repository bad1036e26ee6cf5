package surface

import (
	"context"
	"errors"
	"time"

	"pling.dev/agent/internal/sprint"
)

// AuditEvent is the metadata of one handled request. It never holds input,
// result bodies, cookies or tokens: it says who asked for what and how it
// ended, so it can be stored and shipped without a second review.
type AuditEvent struct {
	RequestID    string `json:"requestId"`
	Method       string `json:"method"`
	Capability   string `json:"capability,omitempty"`
	RecordID     string `json:"recordId,omitempty"`
	SessionID    string `json:"sessionId,omitempty"`
	AgentID      string `json:"agentId,omitempty"`
	UserID       string `json:"userId,omitempty"`
	DelegationID string `json:"delegationId,omitempty"`
	// Outcome classifies the request: "ok" (the exchange completed and the
	// result carries no error), "business_error" (the executor ran and
	// reported a business failure) or "protocol_error" (it failed at the
	// protocol boundary; Code says how).
	Outcome string `json:"outcome"`
	Code    string `json:"code,omitempty"`
	// Approval is the result's approval status (pending, granted, denied or
	// unknown) when the executor reported one, as the agent received it. An
	// invoke whose approval is pending completed as an exchange (Outcome
	// "ok") but has not taken effect: a log that shows outcomes must show
	// this too, or a waiting request reads as a done one.
	Approval   string    `json:"approval,omitempty"`
	DurationMs float64   `json:"durationMs"`
	Time       time.Time `json:"time"`
}

// The outcomes of AuditEvent.Outcome.
const (
	outcomeOK            = "ok"
	outcomeBusinessError = "business_error"
	outcomeProtocolError = "protocol_error"
)

// audit delivers ev. A failing or panicking sink is reported to
// OnAuditError; a failing OnAuditError is contained. Neither can change the
// response, which is already decided when this runs.
func (s *Surface) audit(ctx context.Context, ev AuditEvent) {
	if s.opts.OnAudit == nil {
		return
	}
	err := callAudit(ctx, s.opts.OnAudit, ev)
	if err == nil || s.opts.OnAuditError == nil {
		return
	}
	func() {
		defer func() { _ = recover() }()
		s.opts.OnAuditError(ctx, err, ev)
	}()
}

func callAudit(ctx context.Context, sink func(context.Context, AuditEvent) error, ev AuditEvent) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("audit sink panicked: " + sprint.Sprint(r))
		}
	}()
	return sink(ctx, ev)
}

package surface

import (
	"testing"
	"time"
)

// BenchmarkAuditEventJSON is the encoding of one audit event, which every
// request with an audit sink pays (its time and duration included).
func BenchmarkAuditEventJSON(b *testing.B) {
	ev := AuditEvent{RequestID: "i-1", Method: "invoke", Capability: "update_note@order", RecordID: "SO-1002",
		SessionID: "ses_bench", AgentID: "agent.bench", UserID: "u", Outcome: outcomeOK, DurationMs: 0.061}
	start := time.Now()
	var w wire
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ev.Time = start.Add(time.Duration(i) * 37 * time.Microsecond)
		w.B = w.B[:0]
		w.auditEvent(&ev)
	}
}

package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"pling.dev/agent/internal/pagejson"
	"time"

	"pling.dev/agent/surface"
)

// The kernel's steps across a module boundary: the reactor in ./reactor is
// the kernel compiled for GOOS=wasip1 with the exports the page uses
// (pling_handle, pling_answer), and every ask goes out to the host, which
// answers it with the transcript's fixture (a native Surface's AnswerAsk).
// Asks and answers cross as the JSON below, since a wasip1 module has no JS
// to call; what the kernel decides, and how its steps follow each other, is
// the same code as in the page.

// Kernel answers one encoded request, as Surface.HandleJSON does.
type Kernel interface {
	HandleJSON(ctx context.Context, req []byte) []byte
}

// Via builds the kernel a scene's requests go to. native is the scene's
// own Surface, whose AnswerAsk answers through the scene's fixture;
// options is the options section and now the scene's clock.
type Via func(native *surface.Surface, options []byte, now func() time.Time) (Kernel, error)

// RunVia is Run with the scenes' requests sent to the kernels via builds.
func RunVia(file []byte, via Via) ([]byte, error) {
	f, err := Parse(file)
	if err != nil {
		return nil, err
	}
	r := &runner{page: []byte("{}"), options: []byte("{}"), dirty: true, via: via}
	for i := range f.Sections {
		s := &f.Sections[i]
		if err := r.step(s); err != nil {
			return nil, fmt.Errorf("transcript: line %d: %s: %w", s.Line, s.Name, err)
		}
	}
	return f.Format(), nil
}

// GuestOptions are the options of a kernel whose every ask its host
// answers: built from an options section as the native scene builds them,
// without the services the host stands for (the session getter, the
// registry, the executor). session says whether its exchanges ask for the
// session, as Handle's do when the scene has a session source.
func GuestOptions(options []byte, now func() time.Time) (opts surface.Options, session bool, err error) {
	var ospec optionsSpec
	if err := decodeStrict(options, &ospec); err != nil {
		return surface.Options{}, false, fmt.Errorf("options: %w", err)
	}
	if opts, err = surfaceOptions(ospec); err != nil {
		return opts, false, err
	}
	mode, _, err := parseSession(ospec.Session, now())
	if err != nil {
		return opts, false, err
	}
	opts.Now = now
	// The audit event is an ask the host answers; the sink only turns it on.
	opts.OnAudit = func(context.Context, surface.AuditEvent) error { return nil }
	return opts, mode != sessionOpen, nil
}

// wireAsk is an Ask as JSON; times are nanoseconds since the epoch.
type wireAsk struct {
	Kind    surface.AskKind     `json:"kind"`
	Step    uint32              `json:"step"`
	Query   surface.ViewQuery   `json:"query"`
	Key     string              `json:"key,omitempty"`
	Now     int64               `json:"now,omitempty"`
	Session string              `json:"session,omitempty"`
	Request string              `json:"request,omitempty"`
	Window  time.Duration       `json:"window,omitempty"`
	Action  string              `json:"action,omitempty"`
	Input   json.RawMessage     `json:"input,omitempty"`
	Context surface.CallContext `json:"context"`
	Timeout time.Duration       `json:"timeout,omitempty"`
	Event   *surface.AuditEvent `json:"event,omitempty"`
}

// EncodeAsk is the text of a for its host.
func EncodeAsk(a surface.Ask) ([]byte, error) {
	w := wireAsk{Kind: a.Kind, Step: a.Step, Query: a.Query, Key: a.Key, Session: a.Replay.SessionID,
		Request: a.Replay.RequestID, Window: a.Window, Action: a.Call.Action, Input: a.Call.Input,
		Context: a.Call.Context, Timeout: a.Timeout}
	if !a.Now.IsZero() {
		w.Now = a.Now.UnixNano()
	}
	if a.Kind == surface.AskAudit {
		ev := a.Event
		w.Event = &ev
	}
	return json.Marshal(w)
}

// DecodeAsk reads an ask EncodeAsk wrote.
func DecodeAsk(b []byte) (surface.Ask, error) {
	var w wireAsk
	if err := json.Unmarshal(b, &w); err != nil {
		return surface.Ask{}, err
	}
	a := surface.Ask{Kind: w.Kind, Step: w.Step, Query: w.Query, Key: w.Key,
		Replay: surface.ReplayKey{SessionID: w.Session, RequestID: w.Request}, Window: w.Window,
		Call: surface.Call{Action: w.Action, Input: w.Input, Context: w.Context}, Timeout: w.Timeout}
	if w.Now != 0 {
		a.Now = time.Unix(0, w.Now).UTC()
	}
	if w.Event != nil {
		a.Event = *w.Event
	}
	return a, nil
}

// wireAnswer is an Answer as JSON.
type wireAnswer struct {
	Session  *wireSession    `json:"session,omitempty"`
	View     json.RawMessage `json:"view,omitempty"`
	Verdict  surface.Verdict `json:"verdict,omitempty"`
	Retry    time.Duration   `json:"retry,omitempty"`
	Replay   uint8           `json:"replay,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Err      string          `json:"err,omitempty"`
	TimedOut bool            `json:"timedOut,omitempty"`
}

type wireSession struct {
	surface.Session
	ExpiresAt int64 `json:"expiresAt,omitempty"`
	RevokedAt int64 `json:"revokedAt,omitempty"`
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// EncodeAnswer is the text of ans for the kernel.
func EncodeAnswer(ans surface.Answer) ([]byte, error) {
	w := wireAnswer{Verdict: ans.Decision.Verdict, Retry: ans.Decision.RetryAfter, Replay: uint8(ans.Replay), Result: ans.Result}
	if s := ans.Session; s != nil {
		w.Session = &wireSession{Session: *s, ExpiresAt: nanos(s.ExpiresAt), RevokedAt: nanos(s.RevokedAt)}
	}
	if ans.View != nil {
		v, err := surface.AppendJSON(nil, ans.View)
		if err != nil {
			return nil, err
		}
		w.View = v
	}
	if ans.Err != nil {
		w.Err = ans.Err.Error()
		w.TimedOut = errors.Is(ans.Err, surface.ErrExecuteTimeout)
	}
	return json.Marshal(w)
}

// DecodeAnswer reads the answer EncodeAnswer wrote to the ask a.
func DecodeAnswer(b []byte, a surface.Ask) surface.Answer {
	ans := surface.Answer{Kind: a.Kind, Step: a.Step}
	var w wireAnswer
	if err := json.Unmarshal(b, &w); err != nil {
		ans.Err = err
		return ans
	}
	switch {
	case w.TimedOut:
		ans.Err = surface.ErrExecuteTimeout
	case w.Err != "":
		ans.Err = errors.New(w.Err)
	}
	if s := w.Session; s != nil {
		sess := s.Session
		sess.ExpiresAt, sess.RevokedAt = fromNanos(s.ExpiresAt), fromNanos(s.RevokedAt)
		ans.Session = &sess
	}
	if len(w.View) > 0 {
		v, err := pagejson.ParseView(w.View)
		if err != nil {
			ans.Err = err
		}
		ans.View = v
	}
	ans.Decision = surface.Decision{Verdict: w.Verdict, RetryAfter: w.Retry}
	ans.Replay = surface.ReplayDecision(w.Replay)
	ans.Result = w.Result
	return ans
}

package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// Run replays a transcript against the kernel and returns the same text with
// every expected section (response, calls, audit) replaced by what happened.
// Everything else, the header included, is copied byte for byte. The error
// is for a malformed transcript only; whatever the kernel does is output.
//
// The kernel's clock is a fake that only advance sections move, and Run
// reads no environment, so the output depends on the file alone and is the
// same on every platform the kernel builds for. (The executor deadline runs
// on real time, but only decides whether a hung executor is given up on.)
func Run(file []byte) ([]byte, error) { return RunVia(file, nil) }

// runner holds the fixture definitions and the scene they built. A page or
// options section after any step starts a new scene: a fresh page, clock,
// session and surface.
type runner struct {
	page, options []byte
	dirty         bool
	sc            *scene
	via           Via // nil: requests go to the scene's own Surface
}

// scene is one built fixture.
type scene struct {
	clock *surfacetest.Clock
	page  *surfacetest.Page
	surf  *surface.Surface
	// kernel answers the requests: surf, or what RunVia's via built.
	kernel Kernel
	last   []byte // the last response

	mu     sync.Mutex
	mode   sessionMode
	sess   surface.Session
	events []surface.AuditEvent // audit events not yet checked
}

func (r *runner) step(s *Section) error {
	switch s.Name {
	case secPage:
		r.page, r.dirty = s.Body, true
		return nil
	case secOptions:
		r.options, r.dirty = s.Body, true
		return nil
	case secContains:
		return nil // checked against the output by the tests
	}
	if r.dirty {
		sc, err := newScene(r.page, r.options)
		if err != nil {
			return err
		}
		sc.kernel = sc.surf
		if r.via != nil {
			if sc.kernel, err = r.via(sc.surf, r.options, sc.clock.Now); err != nil {
				return err
			}
		}
		r.sc, r.dirty = sc, false
	}
	sc := r.sc
	switch s.Name {
	case secRequest:
		sc.last = sc.kernel.HandleJSON(context.Background(), requestBytes(s.Body))
	case secResponse:
		var b bytes.Buffer
		if err := json.Indent(&b, sc.last, "", "  "); err != nil {
			return fmt.Errorf("the kernel answered invalid JSON %q: %w", sc.last, err)
		}
		b.WriteByte('\n')
		s.Body = b.Bytes()
	case secCalls:
		body, err := sc.renderCalls()
		if err != nil {
			return err
		}
		s.Body = body
	case secAudit:
		body, err := sc.renderAudit()
		if err != nil {
			return err
		}
		s.Body = body
	case secAdvance:
		ms, _ := strconv.ParseInt(s.Args, 10, 64) // checked by Parse
		sc.clock.Advance(time.Duration(ms) * time.Millisecond)
	case secNavigate:
		sc.page.Lock(func(p *surfacetest.Page) { p.Route = s.Args })
	case secLock:
		found := false
		sc.page.Lock(func(p *surfacetest.Page) {
			for i := range p.Records {
				if p.Records[i].ID == s.Args {
					p.Records[i].Fields["status"] = "locked"
					found = true
				}
			}
		})
		if !found {
			return fmt.Errorf("no record %q", s.Args)
		}
	case secRevoke, secScope, secSession:
		return sc.changeSession(s)
	default:
		return fmt.Errorf("unhandled section")
	}
	return nil
}

func newScene(pageJSON, optionsJSON []byte) (*scene, error) {
	var ps pageSpec
	if err := decodeStrict(pageJSON, &ps); err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	var ospec optionsSpec
	if err := decodeStrict(optionsJSON, &ospec); err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	page, err := buildPage(ps)
	if err != nil {
		return nil, err
	}
	opts, err := surfaceOptions(ospec)
	if err != nil {
		return nil, err
	}
	sc := &scene{clock: surfacetest.NewClock(), page: page}
	if sc.mode, sc.sess, err = parseSession(ospec.Session, sc.clock.Now()); err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	opts.Registry, opts.Execute, opts.Now = page.View, page.Execute, sc.clock.Now
	if sc.mode != sessionOpen {
		opts.Session = sc.sessionSource
	}
	opts.OnAudit = func(_ context.Context, ev surface.AuditEvent) error {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		sc.events = append(sc.events, ev)
		if ospec.AuditFails {
			return errors.New("audit store is unreachable")
		}
		return nil
	}
	if ospec.AuditFails {
		opts.OnAuditError = func(context.Context, error, surface.AuditEvent) { panic("alerting is down too") }
	}
	if sc.surf, err = surface.New(opts); err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	return sc, nil
}

// changeSession applies a revoke, scope or session step. Each needs a scene
// whose options configured a session getter: open mode has none to change.
func (sc *scene) changeSession(s *Section) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.mode == sessionOpen {
		return errors.New("the options configure open mode; there is no session to change")
	}
	switch s.Name {
	case secSession:
		mode, sess, err := parseSession(s.Body, sc.clock.Now())
		if err != nil {
			return err
		}
		if mode == sessionOpen {
			return errors.New("a scene cannot switch to open mode; start a new scene with options")
		}
		sc.mode, sc.sess = mode, sess
		return nil
	}
	if sc.mode != sessionObject {
		return errors.New("the session getter answers no session object")
	}
	switch s.Name {
	case secRevoke:
		sc.sess.RevokedAt = sc.clock.Now()
	case secScope:
		var ids []string
		if err := json.Unmarshal([]byte(s.Args), &ids); err != nil {
			return err
		}
		sc.sess.Scope = ids
	}
	return nil
}

// renderCalls lists every executor call of the scene so far, one per line:
// the concrete action and the business input it received.
func (sc *scene) renderCalls() ([]byte, error) {
	calls := sc.page.Calls()
	lines := make([][]byte, 0, len(calls))
	for _, c := range calls {
		b, err := json.Marshal(struct {
			Action string          `json:"action"`
			Input  json.RawMessage `json:"input"`
		}{c.Action, c.Input})
		if err != nil {
			return nil, fmt.Errorf("executor call %q: %w", c.Action, err)
		}
		lines = append(lines, b)
	}
	return jsonLines(lines), nil
}

// renderAudit lists the audit events since the last audit section, one per
// line, in the kernel's field order. The time is shown as an offset from the
// clock's start ("T+1500ms"), so the text does not depend on the epoch.
func (sc *scene) renderAudit() ([]byte, error) {
	sc.mu.Lock()
	events := sc.events
	sc.events = nil
	sc.mu.Unlock()
	lines := make([][]byte, 0, len(events))
	for _, ev := range events {
		b, err := auditLine(ev)
		if err != nil {
			return nil, err
		}
		lines = append(lines, b)
	}
	return jsonLines(lines), nil
}

func auditLine(ev surface.AuditEvent) ([]byte, error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if key == "time" {
			val, _ = json.Marshal(offset(ev.Time))
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func offset(t time.Time) string {
	ms := t.Sub(surfacetest.Epoch).Milliseconds()
	if ms < 0 {
		return "T" + strconv.FormatInt(ms, 10) + "ms"
	}
	return "T+" + strconv.FormatInt(ms, 10) + "ms"
}

// jsonLines renders a JSON array with one element per line.
func jsonLines(elems [][]byte) []byte {
	if len(elems) == 0 {
		return []byte("[]\n")
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, e := range elems {
		b.WriteString("  ")
		b.Write(e)
		if i < len(elems)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

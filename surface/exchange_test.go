package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// pStepSurface has every step on: a session, a rate limit, the replay guard
// and an audit sink, so an invoke asks for each of them.
func pStepSurface(t testing.TB, page *surfacetest.Page) *surface.Surface {
	return pNewSurface(t, page, func(o *surface.Options) {
		o.Session = surface.StaticSession(pSession("s1", pAllScope(page)...))
		o.RateLimit = &surface.RateLimitOptions{MaxRequests: 1 << 20, Window: time.Minute}
		o.Replay = &surface.ReplayOptions{}
		o.OnAudit = func(context.Context, surface.AuditEvent) error { return nil }
	})
}

func pAllScope(page *surfacetest.Page) []string {
	ids := make([]string, 0, len(page.Actions))
	for _, a := range page.Actions {
		ids = append(ids, a.ID)
	}
	return ids
}

const pStepInvoke = `{"protocol":"pling.surface/0.1","id":"r1","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":"x"}}`

// The seven-step order, as the asks of one invoke with every control on.
func TestExchangeAsksInOrder(t *testing.T) {
	page := pSpecPage(5)
	s := pStepSurface(t, page)
	ctx := context.Background()
	x := s.Begin(nil, []byte(pStepInvoke), true)
	var kinds []surface.AskKind
	for a := x.Ask(); a.Kind != surface.AskDone; {
		kinds = append(kinds, a.Kind)
		var err error
		if a, err = x.Answer(s.AnswerAsk(ctx, a)); err != nil {
			t.Fatal(err)
		}
	}
	want := []surface.AskKind{surface.AskSession, surface.AskLimit, surface.AskView, surface.AskClaim,
		surface.AskExecute, surface.AskView, surface.AskAudit}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("asks = %v, want %v", kinds, want)
	}
	out, _, _ := x.Reply()
	m := pDecode(t, out).(map[string]any)
	if m["ok"] != true {
		t.Fatalf("reply = %s", out)
	}
	if n := len(page.Calls()); n != 1 {
		t.Fatalf("executor ran %d times", n)
	}
}

// Answers of another kind, of another step, repeated, or given after the
// end are refused and change nothing; the executor is asked for once.
func TestExchangeRefusesWrongAnswers(t *testing.T) {
	page := pSpecPage(5)
	s := pStepSurface(t, page)
	ctx := context.Background()
	x := s.Begin(nil, []byte(pStepInvoke), true)
	var last surface.Answer
	executes := 0
	for a := x.Ask(); a.Kind != surface.AskDone; {
		if a.Kind == surface.AskExecute {
			executes++
		}
		right := s.AnswerAsk(ctx, a)
		wrongKind := right
		wrongKind.Kind = a.Kind%6 + 1
		if wrongKind.Kind == a.Kind {
			wrongKind.Kind++
		}
		stale := right
		stale.Step--
		ahead := right
		ahead.Step++
		for name, bad := range map[string]surface.Answer{"kind": wrongKind, "stale step": stale, "next step": ahead, "repeat": last} {
			if last.Kind == 0 && name == "repeat" {
				continue
			}
			got, err := x.Answer(bad)
			if !errors.Is(err, surface.ErrWrongAnswer) {
				t.Fatalf("%s answer to %v step %d: err = %v", name, a.Kind, a.Step, err)
			}
			if !reflect.DeepEqual(got, a) {
				t.Fatalf("%s answer moved the exchange: %+v", name, got)
			}
		}
		var err error
		if a, err = x.Answer(right); err != nil {
			t.Fatal(err)
		}
		last = right
	}
	if _, err := x.Answer(last); !errors.Is(err, surface.ErrWrongAnswer) {
		t.Fatalf("answer after the end: err = %v", err)
	}
	if _, err := x.Answer(surface.Answer{Kind: surface.AskDone, Step: x.Ask().Step}); !errors.Is(err, surface.ErrWrongAnswer) {
		t.Fatalf("done answer after the end: err = %v", err)
	}
	if executes != 1 || len(page.Calls()) != 1 {
		t.Fatalf("execute asked %d times, ran %d times", executes, len(page.Calls()))
	}
	out, _, _ := x.Reply()
	if m := pDecode(t, out).(map[string]any); m["ok"] != true {
		t.Fatalf("reply = %s", out)
	}
}

// An exchange driven by hand answers byte for byte as HandleJSON does.
func TestExchangeEqualsHandleJSON(t *testing.T) {
	ctx := context.Background()
	for _, req := range pSeedRequests {
		a, b := pSpecPage(5), pSpecPage(5)
		sa, sb := pStepSurface(t, a), pStepSurface(t, b)
		want := sa.HandleJSON(ctx, []byte(req))
		x := sb.Begin(nil, []byte(req), true)
		for ask := x.Ask(); ask.Kind != surface.AskDone; {
			var err error
			if ask, err = x.Answer(sb.AnswerAsk(ctx, ask)); err != nil {
				t.Fatal(err)
			}
		}
		got, _, _ := x.Reply()
		if string(got) != string(want) {
			t.Fatalf("request %s:\n got %s\nwant %s", req, got, want)
		}
	}
}

// An executor that answers late, after its time limit, is answered by the
// host with ErrExecuteTimeout; the exchange says so and never asks again.
func TestExchangeExecuteTimeout(t *testing.T) {
	page := pSpecPage(5)
	s := pStepSurface(t, page)
	ctx := context.Background()
	x := s.Begin(nil, []byte(pStepInvoke), true)
	a := x.Ask()
	for a.Kind != surface.AskExecute {
		var err error
		if a, err = x.Answer(s.AnswerAsk(ctx, a)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := x.Answer(surface.Answer{Kind: a.Kind, Step: a.Step, Err: surface.ErrExecuteTimeout})
	if err != nil || a.Kind != surface.AskAudit || a.Event.Code != string(surface.CodeInternalError) {
		t.Fatalf("after a timeout: %+v, %v", a, err)
	}
	late := surface.Answer{Kind: surface.AskExecute, Step: a.Step - 1, Result: json.RawMessage(`{}`)}
	if _, err := x.Answer(late); !errors.Is(err, surface.ErrWrongAnswer) {
		t.Fatalf("late executor answer: err = %v", err)
	}
}

// FuzzExchange drives the step machine with host answers chosen by the
// fuzzer: right, failing, empty, of the wrong kind or step, or repeated.
// The kernel must refuse what does not answer its ask, end every exchange
// with a well-formed reply, ask for the executor at most once, and never
// panic.
func FuzzExchange(f *testing.F) {
	for i, s := range pSeedRequests {
		f.Add([]byte(s), []byte{byte(i), 0, 1, 2, 3, 4, 5, 6, 7})
	}
	f.Add([]byte(pStepInvoke), []byte{0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte(pStepInvoke), []byte{7, 7, 6, 5, 0, 7, 0, 4, 0, 3, 0})
	page := pFuzzPage()
	s := pStepSurface(f, page)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data, script []byte) {
		before := len(page.Calls())
		x := s.Begin(nil, data, true)
		var last surface.Answer
		executes, okExecute := 0, false
		a := x.Ask()
		for i := 0; a.Kind != surface.AskDone; i++ {
			if i > 64 {
				t.Fatalf("exchange did not end; waits for %v", a.Kind)
			}
			if a.Kind == surface.AskExecute {
				executes++
				if executes > 1 {
					t.Fatal("the executor was asked for twice")
				}
			}
			op := byte(0)
			if i < len(script) {
				op = script[i] % 8
			}
			ans := surface.Answer{Kind: a.Kind, Step: a.Step}
			refuse := true
			switch op {
			case 3:
				ans.Err = errors.New("host failed")
				refuse = false
			case 4: // the right kind with nothing in it
				refuse = false
				// An executor that answers nothing has run: its result is null.
				okExecute = okExecute || a.Kind == surface.AskExecute
			case 5:
				ans.Kind = a.Kind%6 + 1
				if ans.Kind == a.Kind {
					ans.Kind++
				}
			case 6:
				ans.Step += uint32(i%2)*2 - 1
			case 7:
				ans = last
				if ans.Kind == 0 {
					ans.Kind = surface.AskDone
				}
			default:
				ans = s.AnswerAsk(ctx, a)
				refuse = false
				if a.Kind == surface.AskExecute && ans.Err == nil {
					okExecute = true
				}
			}
			next, err := x.Answer(ans)
			if refuse {
				if !errors.Is(err, surface.ErrWrongAnswer) || !reflect.DeepEqual(next, a) {
					t.Fatalf("op %d answer to %v step %d taken: %v", op, a.Kind, a.Step, err)
				}
				// Then the right answer, so the exchange moves on.
				ans = s.AnswerAsk(ctx, a)
				if a.Kind == surface.AskExecute && ans.Err == nil {
					okExecute = true
				}
				if next, err = x.Answer(ans); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatalf("answer to %v refused: %v", a.Kind, err)
			}
			last, a = ans, next
		}
		if _, err := x.Answer(last); !errors.Is(err, surface.ErrWrongAnswer) {
			t.Fatal("an answer after the end was taken")
		}
		ran := len(page.Calls()) - before
		if ran > 1 || ran > executes {
			t.Fatalf("executor ran %d times, asked %d", ran, executes)
		}
		out, _, _ := x.Reply()
		m, ok := pDecode(t, out).(map[string]any)
		if !ok {
			t.Fatal("reply is not an object")
		}
		if err := pShapeError(m); err != nil {
			t.Fatal(err)
		}
		if _, isResult := m["result"]; isResult && m["ok"] == true && executes == 1 && !okExecute {
			t.Fatal("an invoke whose executor failed answered ok")
		}
	})
}

// Whether an exchange asks for a session is the exchange's, not the
// options': a host whose caller brings its own session asks for it on a
// surface configured without one, and the answer holds the request to it.
func TestExchangeAsksSessionPerCall(t *testing.T) {
	page := surfacetest.Orders(3)
	s := pNewSurface(t, page, nil) // no Options.Session: open mode by default
	req := []byte(`{"protocol":"pling.surface/0.1","id":"d1","method":"describe"}`)
	drive := func(session bool, answer *surface.Session) (first surface.AskKind, reply map[string]any) {
		x := s.Begin(nil, req, session)
		defer x.Release()
		first = x.Ask().Kind
		for a := x.Ask(); a.Kind != surface.AskDone; {
			ans := s.AnswerAsk(context.Background(), a)
			if a.Kind == surface.AskSession {
				ans.Session, ans.Err = answer, nil
			}
			var err error
			if a, err = x.Answer(ans); err != nil {
				t.Fatal(err)
			}
		}
		out, _, _ := x.Reply()
		return first, pDecode(t, out).(map[string]any)
	}
	if first, m := drive(false, nil); first == surface.AskSession || m["ok"] != true {
		t.Fatalf("open exchange: first ask %v, reply %v", first, m)
	}
	if first, m := drive(true, nil); first != surface.AskSession || pCode(m) != string(surface.CodeSessionRequired) {
		t.Fatalf("exchange asking a session, answered none: first ask %v, reply %v", first, m)
	}
	if _, m := drive(true, pSession("caller", "orders.search")); m["ok"] != true {
		t.Fatalf("exchange asking a session, answered one: reply %v", m)
	}
}

// A kernel with no registry, executor, limiter or guard still asks for
// each step its options turn on, for a host that answers them all; Drive,
// with nothing to answer them, fails each closed.
func TestExchangeAsksWithoutServices(t *testing.T) {
	page := pSpecPage(5)
	host := pStepSurface(t, page) // answers as a host with every service
	bare, err := surface.New(surface.Options{
		Now:       surfacetest.NewClock().Now,
		RateLimit: &surface.RateLimitOptions{},
		Replay:    &surface.ReplayOptions{},
		OnAudit:   func(context.Context, surface.AuditEvent) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	x := bare.Begin(nil, []byte(pStepInvoke), true)
	var kinds []surface.AskKind
	for a := x.Ask(); a.Kind != surface.AskDone; {
		kinds = append(kinds, a.Kind)
		if a, err = x.Answer(host.AnswerAsk(ctx, a)); err != nil {
			t.Fatal(err)
		}
	}
	want := []surface.AskKind{surface.AskSession, surface.AskLimit, surface.AskView, surface.AskClaim,
		surface.AskExecute, surface.AskView, surface.AskAudit}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("asks = %v, want %v", kinds, want)
	}
	if out, _, _ := x.Reply(); pDecode(t, out).(map[string]any)["ok"] != true {
		t.Fatalf("reply = %s", out)
	}

	for _, tt := range []struct {
		name string
		opts surface.Options
		req  string
		code surface.Code
	}{
		{"no session function", surface.Options{Registry: page.View, Execute: page.Execute}, pStepInvoke, surface.CodeSessionInvalid},
		{"no registry", surface.Options{Execute: page.Execute}, `{"protocol":"pling.surface/0.1","id":"d1","method":"describe"}`, surface.CodeInternalError},
		{"no executor", surface.Options{Registry: page.View}, pStepInvoke, surface.CodeInternalError},
		{"no limiter", surface.Options{Registry: page.View, Execute: page.Execute, RateLimit: &surface.RateLimitOptions{}}, pStepInvoke, surface.CodeRateLimitUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Now = surfacetest.NewClock().Now
			s, err := surface.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			x := s.Begin(nil, []byte(tt.req), tt.name == "no session function")
			s.Drive(ctx, x)
			out, _, _ := x.Reply()
			if got := pCode(pDecode(t, out).(map[string]any)); got != string(tt.code) {
				t.Fatalf("reply %s, want %s", out, tt.code)
			}
		})
	}
	if n := len(page.Calls()); n != 1 {
		t.Fatalf("executor ran %d times, want once (the host's)", n)
	}
}

package surface

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"pling.dev/agent/internal/sprint"
)

// Drive runs x to its end, answering each of its asks through the
// interfaces of s's Options: the session source, the registry, the limiter,
// the replay guard, the executor and the audit sink. This is the native
// driver behind Handle, HandleJSON and Describe; hosts that answer some asks
// themselves (a page, through wasm exports) run the same steps with their
// own loop over Exchange.Ask and Exchange.Answer.
func (s *Surface) Drive(ctx context.Context, x *Exchange) {
	for a := x.Ask(); a.Kind != AskDone; {
		ans := s.AnswerAsk(ctx, a)
		next, err := x.Answer(ans)
		if err != nil {
			return // cannot happen: ans answers a
		}
		a = next
	}
}

// AnswerAsk answers a through the interfaces of s's Options, containing
// their panics. It is what Drive does for each step, for hosts that answer
// only some asks themselves.
func (s *Surface) AnswerAsk(ctx context.Context, a Ask) Answer {
	ans := Answer{Kind: a.Kind, Step: a.Step}
	switch a.Kind {
	case AskSession:
		ans.Session, ans.Err = callSessionSource(ctx, s.opts.Session)
	case AskLimit:
		ans.Decision, ans.Err = callLimiter(ctx, s.limiter, a.Key, a.Now)
	case AskView:
		ans.View, ans.Err = s.readView(ctx, a.Query)
	case AskClaim:
		ans.Replay, ans.Err = callGuard(ctx, s.guard, a.Replay, a.Now, a.Window)
	case AskExecute:
		ans.Result, ans.Err = s.execute(ctx, a.Call)
	case AskAudit:
		s.audit(ctx, a.Event)
	}
	return ans
}

func callSessionSource(ctx context.Context, src func(context.Context) (*Session, error)) (sess *Session, err error) {
	if src == nil {
		return nil, errNoSession
	}
	defer func() {
		if r := recover(); r != nil {
			sess, err = nil, errors.New("session source panicked: "+sprint.Sprint(r))
		}
	}()
	return src(ctx)
}

func callLimiter(ctx context.Context, l Limiter, key string, now time.Time) (d Decision, err error) {
	if l == nil {
		return Decision{}, errNoLimiter
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = Decision{}, errors.New("limiter panicked: "+sprint.Sprint(r))
		}
	}()
	return l.Allow(ctx, key, now)
}

func callGuard(ctx context.Context, g ReplayGuard, key ReplayKey, now time.Time, window time.Duration) (d ReplayDecision, err error) {
	if g == nil {
		return 0, errNoGuard
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = 0, errors.New("replay guard panicked: "+sprint.Sprint(r))
		}
	}()
	return g.Claim(ctx, key, now, window)
}

// What Drive answers an ask with when the options give it nothing to ask
// (a host answers those asks itself): the exchange fails closed.
var (
	errNoView     = errors.New("surface: registry answered no view")
	errNoRegistry = errors.New("surface: no Options.Registry to answer a view ask")
	errNoExecutor = errors.New("surface: no Options.Execute to answer an execute ask")
	errNoLimiter  = errors.New("surface: no limiter to answer a limit ask")
	errNoGuard    = errors.New("surface: no replay guard to answer a claim ask")
	errNoSession  = errors.New("surface: no Options.Session to answer a session ask")
)

// readView reads the registry, containing its failures.
func (s *Surface) readView(ctx context.Context, q ViewQuery) (v *View, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, errors.New("registry panicked: "+sprint.Sprint(r))
		}
	}()
	if s.opts.Registry == nil {
		return nil, errNoRegistry
	}
	v, err = s.opts.Registry(ctx, q)
	if err == nil && v == nil {
		err = errNoView
	}
	return v, err
}

type execOutcome struct {
	result json.RawMessage
	err    error
	at     time.Time // when the executor returned
}

// execute calls the executor once, with a deadline, containing panics. A
// call that outlives the deadline is abandoned with its context cancelled
// (ErrExecuteTimeout); its effect is unknown, which the INTERNAL_ERROR says
// without detail. What decides is when the executor returned, not which
// channel this goroutine saw first: scheduled late, it may find both the
// answer and the deadline ready, and an executor that answers because its
// context ended answered after the deadline.
func (s *Surface) execute(ctx context.Context, call Call) (json.RawMessage, error) {
	if s.opts.Execute == nil {
		return nil, errNoExecutor
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ExecuteTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	done := make(chan execOutcome, 1) // buffered: a late answer never blocks
	go func() {
		var out execOutcome
		defer func() {
			if r := recover(); r != nil {
				out = execOutcome{err: errors.New("executor panicked: " + sprint.Sprint(r))}
			}
			out.at = time.Now()
			done <- out
		}()
		out.result, out.err = s.opts.Execute(ctx, call)
	}()
	var out execOutcome
	select {
	case out = <-done:
	case <-ctx.Done():
		select {
		case out = <-done:
		default:
			return nil, ErrExecuteTimeout
		}
	}
	if !out.at.Before(deadline) {
		return nil, ErrExecuteTimeout
	}
	return out.result, out.err
}

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

func callSessionSource(ctx context.Context, src SessionSource) (sess *Session, err error) {
	defer func() {
		if r := recover(); r != nil {
			sess, err = nil, errors.New("session source panicked: "+sprint.Sprint(r))
		}
	}()
	return src(ctx)
}

func callLimiter(ctx context.Context, l Limiter, key string, now time.Time) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = Decision{}, errors.New("limiter panicked: "+sprint.Sprint(r))
		}
	}()
	return l.Allow(ctx, key, now)
}

func callGuard(ctx context.Context, g ReplayGuard, key ReplayKey, now time.Time, window time.Duration) (d ReplayDecision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = 0, errors.New("replay guard panicked: "+sprint.Sprint(r))
		}
	}()
	return g.Claim(ctx, key, now, window)
}

var errNoView = errors.New("surface: registry answered no view")

// readView reads the registry, containing its failures.
func (s *Surface) readView(ctx context.Context, q ViewQuery) (v *View, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, errors.New("registry panicked: "+sprint.Sprint(r))
		}
	}()
	v, err = s.opts.Registry.View(ctx, q)
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
	if x, ok := s.opts.Execute.(TimedExecutor); ok {
		return s.executeTimed(ctx, x, call)
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
		out.result, out.err = s.opts.Execute.Execute(ctx, call)
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

// executeTimed calls an executor that keeps the limit itself, on this
// goroutine, containing panics.
func (s *Surface) executeTimed(ctx context.Context, x TimedExecutor, call Call) (raw json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			raw, err = nil, errors.New("executor panicked: "+sprint.Sprint(r))
		}
	}()
	return x.ExecuteTimed(ctx, call, s.opts.ExecuteTimeout)
}

package surface

import (
	"pling.dev/agent/surface/internal/schema"
)

// effectiveSet is C_eff = C_page ∩ C_session for one read of the registry:
// the capabilities a session may see and call, in registry order.
type effectiveSet struct {
	caps     []Capability
	withheld []Unavailable // exposed and in scope, but unsafe to offer
}

type effectiveCap struct {
	action *Action
	schema *schema.Schema
}

// effective computes the session's capabilities from view. A capability is
// in the set when the page exposes it (Options.Expose), the session's scope
// names it (or there is no session: open mode), its id is unique, and its
// input schema compiles. Anything that fails the last two is withheld and
// reported as unavailable, never offered with a check missing.
func (s *Surface) effective(view *View, sess *Session) *effectiveSet {
	var scope map[string]struct{}
	if sess != nil {
		scope = make(map[string]struct{}, len(sess.Scope))
		for _, id := range sess.Scope {
			scope[id] = struct{}{}
		}
	}
	counts := make(map[string]int, len(view.Actions))
	for i := range view.Actions {
		counts[view.Actions[i].ID]++
	}
	var reported map[string]bool
	set := &effectiveSet{caps: make([]Capability, 0, len(view.Actions))}
	for i := range view.Actions {
		a := &view.Actions[i]
		if a.ID == "" || !s.exposed(a.ID) {
			continue
		}
		if scope != nil {
			if _, ok := scope[a.ID]; !ok {
				continue
			}
		}
		if counts[a.ID] > 1 {
			// Two actions behind one id would make invoke ambiguous.
			if !reported[a.ID] {
				if reported == nil {
					reported = map[string]bool{}
				}
				reported[a.ID] = true
				set.withheld = append(set.withheld, Unavailable{ID: a.ID, Reason: "capability id is declared more than once"})
			}
			continue
		}
		if _, err := s.schemas.get(a.InputSchema); err != nil {
			set.withheld = append(set.withheld, Unavailable{ID: a.ID, Reason: "input schema does not compile"})
			continue
		}
		set.caps = append(set.caps, project(a))
	}
	return set
}

// lookup finds one capability of the effective set without projecting the
// whole list: invoke needs only the capability it names. The rules are the
// same as effective's, so describe and invoke never disagree.
func (s *Surface) lookup(view *View, sess *Session, id string) *effectiveCap {
	var found *Action
	for i := range view.Actions {
		if view.Actions[i].ID == id {
			if found != nil {
				return nil // declared twice: withheld
			}
			found = &view.Actions[i]
		}
	}
	if found == nil || id == "" || !s.exposed(id) || !inScope(sess, id) {
		return nil
	}
	sch, err := s.schemas.get(found.InputSchema)
	if err != nil {
		return nil
	}
	return &effectiveCap{action: found, schema: sch}
}

func inScope(sess *Session, id string) bool {
	if sess == nil {
		return true // open mode
	}
	for _, s := range sess.Scope {
		if s == id {
			return true
		}
	}
	return false
}

// exposed asks the page-level predicate; a predicate that panics exposes nothing.
func (s *Surface) exposed(id string) (ok bool) {
	if s.opts.Expose == nil {
		return true
	}
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	return s.opts.Expose(id)
}

// project turns a registry action into its wire capability.
func project(a *Action) Capability {
	c := Capability{
		ID:          a.ID,
		Description: a.Description,
		InputSchema: a.InputSchema,
		Effect:      a.Effect,
		Approval:    a.Approval,
		Fidelity:    a.Fidelity,
		Source:      a.Source,
		ScopePath:   a.ScopePath,
		Handoff:     a.Handoff,
		FlowSteps:   a.FlowSteps,
		Offscreen:   a.Offscreen,
	}
	if t := a.Record; t != nil {
		c.Record = &CapabilityRecord{Param: t.param(), Total: t.Total, Offscreen: t.Offscreen}
	}
	return c
}

func (t *RecordTemplate) param() string {
	if t.Param == "" {
		return "record"
	}
	return t.Param
}

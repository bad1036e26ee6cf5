package surface

import (
	"sort"
)

// describeQuery is the registry read a describe with input in makes.
func (s *Surface) describeQuery(in DescribeInput) ViewQuery {
	q := ViewQuery{}
	if in.Records != nil {
		q.IDs = in.Records
	} else {
		q.Limit = s.opts.RecordLimit
		if in.Limit != nil {
			q.Limit = min(*in.Limit, s.opts.MaxRecordLimit)
		}
		if in.Offset != nil {
			q.Offset = *in.Offset
		}
	}
	q.MaxRecordIDs = s.opts.Limits.MaxRecordIDs // only a description lists them
	return q
}

// buildDescription builds the description (steps 4-7 of describe after
// input checks) from the view read for q. tracked says whether the call
// comes from the protocol, the only caller whose last-sent list the
// signature cache remembers: an in-page Describe must not reset what an
// agent sharing the session was last sent.
func (s *Surface) buildDescription(view *View, sess *Session, in DescribeInput, q ViewQuery, tracked bool) *Description {
	set := s.capabilities(view, sess)
	lim := s.opts.Limits

	d := &Description{Protocol: Protocol, App: s.opts.App, Capabilities: set.caps,
		capsJSON: set.json, capsLen: len(set.caps), capsID: set.jsonID}
	if tracked && in.Changed && s.sigs.unchanged(sess, view.Route, set.sig) {
		d.Capabilities = []Capability{}
		d.CapabilitiesUnchanged = true
		d.capsJSON, d.capsLen, d.capsID = nil, 0, 0
	}
	if tracked {
		s.sigs.store(sess, view.Route, set.sig)
	}
	if n := len(d.Capabilities); n > lim.MaxCapabilities {
		d.Capabilities = d.Capabilities[:lim.MaxCapabilities]
		d.CapabilitiesTotal = n
		d.capsJSON, d.capsLen, d.capsID = set.shown, len(d.Capabilities), set.shownID
	}

	c := &d.Context
	c.Route = view.Route
	c.Regions, c.RegionsTotal = capList(view.Regions, lim.MaxRegions)
	if c.RegionsTotal == len(c.Regions) {
		c.RegionsTotal = 0 // only reported when cut
	}
	c.Records = selectRecords(view.Records, q)
	c.RecordsTotal = view.RecordsTotal
	if n := len(c.Records); n > 0 {
		// Never below what was shown; an empty page past the end proves nothing.
		c.RecordsTotal = max(c.RecordsTotal, q.Offset+n)
	}
	c.RecordIDs, c.RecordIDsTotal = capList(view.RecordIDs, lim.MaxRecordIDs)
	c.RecordIDsTotal = max(c.RecordIDsTotal, view.RecordIDsTotal)
	c.State, c.StateTotal = capState(view.State, lim.MaxStateKeys)
	c.Feedback, c.FeedbackTotal = capList(view.Feedback, lim.MaxFeedback)
	unavailable := append(append([]Unavailable(nil), set.withheld...), view.Unavailable...)
	c.Unavailable, c.UnavailableTotal = capList(unavailable, lim.MaxUnavailable)
	return d
}

// capList returns at most n items of list (never nil) and the full count.
func capList[T any](list []T, n int) ([]T, int) {
	total := len(list)
	if total > n {
		list = list[:n]
	}
	if list == nil {
		list = []T{}
	}
	return list, total
}

// capState keeps at most n state keys, the first n in key order so the cut
// is stable, and reports the total only when it cut.
func capState(state map[string]any, n int) (map[string]any, int) {
	if len(state) <= n {
		if state == nil {
			return map[string]any{}, 0
		}
		return state, 0
	}
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, n)
	for _, k := range keys[:n] {
		out[k] = state[k]
	}
	return out, len(state)
}

// selectRecords returns the records the query asked for, in the order asked,
// no more than the window: a registry that answers more is cut, not trusted.
func selectRecords(recs []Record, q ViewQuery) []RecordView {
	out := []RecordView{}
	if q.IDs != nil {
		byID := make(map[string]*Record, len(recs))
		for i := range recs {
			if _, dup := byID[recs[i].ID]; !dup {
				byID[recs[i].ID] = &recs[i]
			}
		}
		for _, id := range q.IDs {
			if r, ok := byID[id]; ok {
				out = append(out, recordView(r))
			}
		}
		return out
	}
	for i := range recs {
		if len(out) == q.Limit {
			break
		}
		out = append(out, recordView(&recs[i]))
	}
	return out
}

func recordView(r *Record) RecordView {
	return RecordView{ID: r.ID, Kind: r.Kind, Fields: r.Fields, Offscreen: r.Offscreen}
}

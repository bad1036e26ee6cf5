package pagejson

import (
	"pling.dev/agent/internal/jsonread"
	"pling.dev/agent/surface"
)

// ParseView decodes the JSON form of a surface.View (the json tags of View
// and the types it holds) exactly as encoding/json does with Decoder.UseNumber:
// numbers in free-form values (Record.Fields, View.State) stay json.Number,
// unknown members are ignored, and anything after the value is an error.
//
// Hosts that receive the page's view as JSON text call it on every read
// whose text changed. It reads without reflection (see internal/jsonread),
// which under WebAssembly costs a fraction of encoding/json's time and
// keeps encoding/json's decoder out of the binary; where it fails, the
// error is encoding/json's own (see std.go).
func ParseView(data []byte) (*surface.View, error) {
	r := jsonread.New(data)
	v := new(surface.View)
	readView(r, v)
	if !r.End() {
		v = new(surface.View)
		if err := decodeStd(data, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Member names, keyed by the constants the readers switch on: a name and
// the code that reads its value meet by name, never by position.
var (
	viewFields        = [...]string{viewRoute: "route", viewActions: "actions", viewRegions: "regions", viewRecords: "records", viewRecordIDs: "recordIds", viewRecordIDsTotal: "recordIdsTotal", viewRecordsTotal: "recordsTotal", viewState: "state", viewFeedback: "feedback", viewUnavailable: "unavailable"}
	regionFields      = [...]string{regionID: "id", regionLabel: "label", regionDescription: "description"}
	recordViewFields  = [...]string{recordViewID: "id", recordViewKind: "kind", recordViewFieldsMember: "fields", recordViewOffscreen: "offscreen", recordViewActions: "actions"}
	feedbackFields    = [...]string{feedbackLevel: "level", feedbackMessage: "message", feedbackRecord: "record"}
	unavailableFields = [...]string{unavailableID: "id", unavailableReason: "reason"}
)

func readView(r *jsonread.Reader, v *surface.View) {
	r.Object(viewFields[:], false, func(field int) {
		switch field {
		case viewRoute:
			r.String(&v.Route)
		case viewActions:
			readActions(r, &v.Actions)
		case viewRegions:
			jsonread.List(r, &v.Regions, func(g *surface.Region) {
				r.Object(regionFields[:], false, func(f int) {
					switch f {
					case regionID:
						r.String(&g.ID)
					case regionLabel:
						r.String(&g.Label)
					case regionDescription:
						r.String(&g.Description)
					}
				})
			})
		case viewRecords:
			jsonread.List(r, &v.Records, func(rec *surface.Record) { readRecord(r, rec) })
		case viewRecordIDs:
			r.Strings(&v.RecordIDs)
		case viewRecordIDsTotal:
			r.Int(&v.RecordIDsTotal)
		case viewRecordsTotal:
			r.Int(&v.RecordsTotal)
		case viewState:
			r.Tree(&v.State)
		case viewFeedback:
			jsonread.List(r, &v.Feedback, func(fb *surface.Feedback) {
				r.Object(feedbackFields[:], false, func(f int) {
					switch f {
					case feedbackLevel:
						r.String(&fb.Level)
					case feedbackMessage:
						r.String(&fb.Message)
					case feedbackRecord:
						r.String(&fb.Record)
					}
				})
			})
		case viewUnavailable:
			jsonread.List(r, &v.Unavailable, func(u *surface.Unavailable) {
				r.Object(unavailableFields[:], false, func(f int) {
					switch f {
					case unavailableID:
						r.String(&u.ID)
					case unavailableReason:
						r.String(&u.Reason)
					}
				})
			})
		}
	})
}

func readRecord(r *jsonread.Reader, rec *surface.Record) {
	r.Object(recordViewFields[:], false, func(f int) {
		switch f {
		case recordViewID:
			r.String(&rec.ID)
		case recordViewKind:
			r.String(&rec.Kind)
		case recordViewFieldsMember:
			r.Tree(&rec.Fields)
		case recordViewOffscreen:
			r.Bool(&rec.Offscreen)
		case recordViewActions:
			r.StringMap(&rec.Actions)
		}
	})
}

// Members of the view object, indexes into viewFields.
const (
	viewRoute = iota
	viewActions
	viewRegions
	viewRecords
	viewRecordIDs
	viewRecordIDsTotal
	viewRecordsTotal
	viewState
	viewFeedback
	viewUnavailable
)

// Members of the region object, indexes into regionFields.
const (
	regionID = iota
	regionLabel
	regionDescription
)

// Members of the recordView object, indexes into recordViewFields.
const (
	recordViewID = iota
	recordViewKind
	recordViewFieldsMember
	recordViewOffscreen
	recordViewActions
)

// Members of the feedback object, indexes into feedbackFields.
const (
	feedbackLevel = iota
	feedbackMessage
	feedbackRecord
)

// Members of the unavailable object, indexes into unavailableFields.
const (
	unavailableID = iota
	unavailableReason
)

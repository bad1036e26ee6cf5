package surface

import (
	"pling.dev/agent/internal/jsonread"
)

// ParseView decodes the JSON form of a View (the json tags of View and the
// types it holds) exactly as encoding/json does with Decoder.UseNumber:
// numbers in free-form values (Record.Fields, View.State) stay json.Number,
// unknown members are ignored, and anything after the value is an error.
//
// Hosts that receive the page's view as JSON text call it on every read
// whose text changed. It reads without reflection (see internal/jsonread),
// which under WebAssembly costs a fraction of encoding/json's time and
// keeps encoding/json's decoder out of the binary; where it fails, the
// error is encoding/json's own (see stdjson.go).
func ParseView(data []byte) (*View, error) {
	r := jsonread.New(data)
	v := new(View)
	readView(r, v)
	if !r.End() {
		v = new(View)
		if err := decodeStd(data, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

var (
	viewFields        = []string{"route", "actions", "regions", "records", "recordIds", "recordIdsTotal", "recordsTotal", "state", "feedback", "unavailable"}
	regionFields      = []string{"id", "label", "description"}
	recordFields      = []string{"id", "kind", "fields", "offscreen", "actions"}
	feedbackFields    = []string{"level", "message", "record"}
	unavailableFields = []string{"id", "reason"}
)

func readView(r *jsonread.Reader, v *View) {
	r.Object(viewFields, false, func(field int) {
		switch field {
		case 0:
			r.String(&v.Route)
		case 1:
			readActions(r, &v.Actions)
		case 2:
			jsonread.List(r, &v.Regions, func(g *Region) {
				r.Object(regionFields, false, func(f int) {
					switch f {
					case 0:
						r.String(&g.ID)
					case 1:
						r.String(&g.Label)
					case 2:
						r.String(&g.Description)
					}
				})
			})
		case 3:
			jsonread.List(r, &v.Records, func(rec *Record) { readRecord(r, rec) })
		case 4:
			r.Strings(&v.RecordIDs)
		case 5:
			r.Int(&v.RecordIDsTotal)
		case 6:
			r.Int(&v.RecordsTotal)
		case 7:
			r.Tree(&v.State)
		case 8:
			jsonread.List(r, &v.Feedback, func(fb *Feedback) {
				r.Object(feedbackFields, false, func(f int) {
					switch f {
					case 0:
						r.String(&fb.Level)
					case 1:
						r.String(&fb.Message)
					case 2:
						r.String(&fb.Record)
					}
				})
			})
		case 9:
			jsonread.List(r, &v.Unavailable, func(u *Unavailable) {
				r.Object(unavailableFields, false, func(f int) {
					switch f {
					case 0:
						r.String(&u.ID)
					case 1:
						r.String(&u.Reason)
					}
				})
			})
		}
	})
}

func readRecord(r *jsonread.Reader, rec *Record) {
	r.Object(recordFields, false, func(f int) {
		switch f {
		case 0:
			r.String(&rec.ID)
		case 1:
			r.String(&rec.Kind)
		case 2:
			r.Tree(&rec.Fields)
		case 3:
			r.Bool(&rec.Offscreen)
		case 4:
			r.StringMap(&rec.Actions)
		}
	})
}

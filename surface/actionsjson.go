package surface

import (
	"pling.dev/agent/internal/jsonread"
)

// ParseActions decodes the JSON form of an action list (the json tags of
// Action and RecordTemplate) exactly as encoding/json decodes it into a
// []Action with Decoder.UseNumber: null gives a nil list, an input schema
// keeps its exact text (null included, as "null"), unknown members are
// ignored, and anything after the value is an error.
//
// Hosts that receive the page's actions as JSON text parse them once per
// version. Under WebAssembly, encoding/json's first use of a type costs
// tens of milliseconds (reflection over the type, then cold code), which
// would land on a page's first describe; like ParseView, ParseActions
// reads without reflection and words a failure as encoding/json does.
func ParseActions(data []byte) ([]Action, error) {
	r := jsonread.New(data)
	var acts []Action
	readActions(r, &acts)
	if !r.End() {
		acts = nil
		if err := decodeStd(data, &acts); err != nil {
			return nil, err
		}
	}
	return acts, nil
}

var (
	actionFields   = []string{"id", "description", "inputSchema", "effect", "approval", "fidelity", "source", "scopePath", "handoff", "flowSteps", "offscreen", "record"}
	templateFields = []string{"kind", "param", "total", "offscreen"}
)

// readActions reads an action list into *acts.
func readActions(r *jsonread.Reader, acts *[]Action) {
	jsonread.List(r, acts, func(a *Action) { readAction(r, a) })
}

func readAction(r *jsonread.Reader, a *Action) {
	r.Object(actionFields, false, func(field int) {
		switch field {
		case 0:
			r.String(&a.ID)
		case 1:
			r.String(&a.Description)
		case 2:
			a.InputSchema = r.Raw()
		case 3:
			r.String(&a.Effect)
		case 4:
			r.String(&a.Approval)
		case 5:
			r.String(&a.Fidelity)
		case 6:
			r.String(&a.Source)
		case 7:
			r.Strings(&a.ScopePath)
		case 8:
			r.String(&a.Handoff)
		case 9:
			r.Strings(&a.FlowSteps)
		case 10:
			r.Bool(&a.Offscreen)
		case 11:
			// A pointer: null makes it nil, a repeated member decodes
			// into the template the earlier one made.
			if r.Null() {
				a.Record = nil
				return
			}
			if a.Record == nil {
				a.Record = new(RecordTemplate)
			}
			t := a.Record
			r.Object(templateFields, false, func(f int) {
				switch f {
				case 0:
					r.String(&t.Kind)
				case 1:
					r.String(&t.Param)
				case 2:
					r.Int(&t.Total)
				case 3:
					r.Int(&t.Offscreen)
				}
			})
		}
	})
}

// Package pagejson reads the JSON texts a page hands its host, its action
// list and its view, into the kernel's types, without reflection.
package pagejson

import (
	"pling.dev/agent/internal/jsonread"
	"pling.dev/agent/surface"
)

// ParseActions decodes the JSON form of an action list (the json tags of
// surface.Action and surface.RecordTemplate) exactly as encoding/json
// decodes it into a []surface.Action with Decoder.UseNumber: null gives a
// nil list, an input schema keeps its exact text (null included, as "null"), unknown members are
// ignored, and anything after the value is an error.
//
// Hosts that receive the page's actions as JSON text parse them once per
// version. Under WebAssembly, encoding/json's first use of a type costs
// tens of milliseconds (reflection over the type, then cold code), which
// would land on a page's first describe; like ParseView, ParseActions
// reads without reflection and words a failure as encoding/json does.
func ParseActions(data []byte) ([]surface.Action, error) {
	r := jsonread.New(data)
	var acts []surface.Action
	readActions(r, &acts)
	if !r.End() {
		acts = nil
		if err := decodeStd(data, &acts); err != nil {
			return nil, err
		}
	}
	return acts, nil
}

// Member names, keyed by the constants the readers switch on: a name and
// the code that reads its value meet by name, never by position.
var (
	actionFields   = [...]string{actionID: "id", actionDescription: "description", actionInputSchema: "inputSchema", actionEffect: "effect", actionApproval: "approval", actionFidelity: "fidelity", actionSource: "source", actionScopePath: "scopePath", actionHandoff: "handoff", actionFlowSteps: "flowSteps", actionOffscreen: "offscreen", actionRecord: "record"}
	templateFields = [...]string{templateKind: "kind", templateParam: "param", templateTotal: "total", templateOffscreen: "offscreen"}
)

// readActions reads an action list into *acts.
func readActions(r *jsonread.Reader, acts *[]surface.Action) {
	jsonread.List(r, acts, func(a *surface.Action) { readAction(r, a) })
}

func readAction(r *jsonread.Reader, a *surface.Action) {
	r.Object(actionFields[:], false, func(field int) {
		switch field {
		case actionID:
			r.String(&a.ID)
		case actionDescription:
			r.String(&a.Description)
		case actionInputSchema:
			a.InputSchema = r.Raw()
		case actionEffect:
			r.String(&a.Effect)
		case actionApproval:
			r.String(&a.Approval)
		case actionFidelity:
			r.String(&a.Fidelity)
		case actionSource:
			r.String(&a.Source)
		case actionScopePath:
			r.Strings(&a.ScopePath)
		case actionHandoff:
			r.String(&a.Handoff)
		case actionFlowSteps:
			r.Strings(&a.FlowSteps)
		case actionOffscreen:
			r.Bool(&a.Offscreen)
		case actionRecord:
			// A pointer: null makes it nil, a repeated member decodes
			// into the template the earlier one made.
			if r.Null() {
				a.Record = nil
				return
			}
			if a.Record == nil {
				a.Record = new(surface.RecordTemplate)
			}
			t := a.Record
			r.Object(templateFields[:], false, func(f int) {
				switch f {
				case templateKind:
					r.String(&t.Kind)
				case templateParam:
					r.String(&t.Param)
				case templateTotal:
					r.Int(&t.Total)
				case templateOffscreen:
					r.Int(&t.Offscreen)
				}
			})
		}
	})
}

// Members of the action object, indexes into actionFields.
const (
	actionID = iota
	actionDescription
	actionInputSchema
	actionEffect
	actionApproval
	actionFidelity
	actionSource
	actionScopePath
	actionHandoff
	actionFlowSteps
	actionOffscreen
	actionRecord
)

// Members of the template object, indexes into templateFields.
const (
	templateKind = iota
	templateParam
	templateTotal
	templateOffscreen
)

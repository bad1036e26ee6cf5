package surface

import "encoding/json"

// Description is what describe returns: the session's effective
// capabilities and a bounded view of the page.
type Description struct {
	Protocol     string       `json:"protocol"`
	App          string       `json:"app,omitempty"`
	Capabilities []Capability `json:"capabilities"`
	// CapabilitiesTotal is set only when the list was cut at
	// Limits.MaxCapabilities.
	CapabilitiesTotal int `json:"capabilitiesTotal,omitempty"`
	// CapabilitiesUnchanged is true when the caller asked for
	// capabilities: "changed" and the list it was last sent still holds;
	// Capabilities is then empty. Clients that do not know the field can
	// ignore it: they see an empty list only when they asked for one.
	CapabilitiesUnchanged bool    `json:"capabilitiesUnchanged,omitempty"`
	Context               Context `json:"context"`

	// capsJSON is the encoding of Capabilities (capsLen entries) that the
	// kernel built with the list, so encoding the response splices it in
	// instead of encoding the list again; capsID names those bytes when
	// they are cached and shared (see SharedCaps). Descriptions handed to
	// callers never carry them (see detach).
	capsJSON []byte
	capsLen  int
	capsID   uint64
}

// Context is the bounded page context of a description. Every list has an
// upper bound, and its total says how much was left out.
type Context struct {
	// Route is the page's navigation state, when it has one.
	Route   string   `json:"route,omitempty"`
	Regions []Region `json:"regions"`
	// RegionsTotal is set only when Regions was cut.
	RegionsTotal   int            `json:"regionsTotal,omitempty"`
	Records        []RecordView   `json:"records"`
	RecordIDs      []string       `json:"recordIds"`
	RecordIDsTotal int            `json:"recordIdsTotal"`
	State          map[string]any `json:"state"`
	// StateTotal is set only when State was cut.
	StateTotal       int           `json:"stateTotal,omitempty"`
	Feedback         []Feedback    `json:"feedback"`
	Unavailable      []Unavailable `json:"unavailable"`
	RecordsTotal     int           `json:"recordsTotal"`
	FeedbackTotal    int           `json:"feedbackTotal"`
	UnavailableTotal int           `json:"unavailableTotal"`
}

// Capability is the wire form of one effective capability: a stable
// transfer object, not the page's internal action.
type Capability struct {
	ID          string          `json:"id"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Effect      string          `json:"effect,omitempty"`
	Approval    string          `json:"approval,omitempty"`
	Fidelity    string          `json:"fidelity,omitempty"`
	Source      string          `json:"source,omitempty"`
	ScopePath   []string        `json:"scopePath,omitempty"`
	Handoff     string          `json:"handoff,omitempty"`
	FlowSteps   []string        `json:"flowSteps,omitempty"`
	Offscreen   bool            `json:"offscreen,omitempty"`
	// Record is set on folded per-record templates.
	Record *CapabilityRecord `json:"record,omitempty"`
}

// CapabilityRecord is the record metadata of a folded template: invoke names
// the target in input[Param]; Total records can be targeted, Offscreen of
// them are out of view.
type CapabilityRecord struct {
	Param     string `json:"param"`
	Total     int    `json:"total"`
	Offscreen int    `json:"offscreen,omitempty"`
}

// RecordView is the wire form of a record.
type RecordView struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind,omitempty"`
	Fields    map[string]any `json:"fields,omitempty"`
	Offscreen bool           `json:"offscreen,omitempty"`
}

// Observation is the bounded, incremental "after" of an invoke: what changed
// on the target record(s) and in the page state. It is evidence of a change,
// not proof of authorization and not a snapshot.
type Observation struct {
	Records        []ObservedRecord `json:"records,omitempty"`
	RecordsOmitted int              `json:"recordsOmitted,omitempty"`
	State          map[string]any   `json:"state,omitempty"`
	StateOmitted   int              `json:"stateOmitted,omitempty"`
}

// ObservedRecord is one changed record: its changed fields (a removed field
// is null), or Removed when the record is no longer referenceable.
type ObservedRecord struct {
	ID            string         `json:"id"`
	Fields        map[string]any `json:"fields,omitempty"`
	FieldsOmitted int            `json:"fieldsOmitted,omitempty"`
	Removed       bool           `json:"removed,omitempty"`
}

// Response is one protocol response. Exactly one of Result and Error is set.
type Response struct {
	Protocol string `json:"protocol"`
	ID       string `json:"id"`
	OK       bool   `json:"ok"`
	// Result is a *Description for describe and the executor's
	// (sanitized) JSON result for invoke.
	Result any          `json:"result,omitempty"`
	After  *Observation `json:"after,omitempty"`
	Error  *Error       `json:"error,omitempty"`
}

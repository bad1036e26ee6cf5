package surface

import (
	"encoding/json"
	"errors"
)

// ViewQuery says which records the kernel needs from one read.
type ViewQuery struct {
	// IDs, when non-nil, asks for exactly these records (in any order);
	// Offset and Limit are then zero. Ids the page cannot reference are
	// simply absent from View.Records.
	IDs []string `json:"ids,omitempty"`
	// Offset and Limit select a window of the active region's records.
	// Limit 0 asks for no records at all (invoke reads only what it targets).
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	// MaxRecordIDs bounds View.RecordIDs; the page may stop listing there.
	// Only describe lists record ids: an invoke's reads ask for none.
	MaxRecordIDs int `json:"maxRecordIds"`
}

// View is one read of the page: its actions and the context an agent needs to
// choose among them.
type View struct {
	// Route identifies the current navigation state (path, tab, view). A
	// change of route invalidates cached capability signatures.
	Route string `json:"route,omitempty"`
	// Actions lists the page's actions now, in the order they should be shown.
	Actions []Action `json:"actions"`
	// ActionsVersion, when not empty, names this exact Actions list: a
	// registry must give a different version whenever the actions (or
	// the answers of Options.Expose for them) change. The kernel then
	// derives each session's capability list, its signature and its
	// encoding once per version and scope instead of on every describe.
	// Empty means unknown: everything is derived from Actions again.
	ActionsVersion string `json:"-"`
	// Regions are the page areas with business meaning.
	Regions []Region `json:"regions,omitempty"`
	// Records are the records the query asked for.
	Records []Record `json:"records,omitempty"`
	// RecordIDs lists the referenceable records of the active region (up to
	// ViewQuery.MaxRecordIDs); RecordIDsTotal counts all of them.
	RecordIDs      []string `json:"recordIds,omitempty"`
	RecordIDsTotal int      `json:"recordIdsTotal,omitempty"`
	// RecordsTotal counts the records of the active region.
	RecordsTotal int `json:"recordsTotal,omitempty"`
	// State is the page's state view (filters, paging, selection): small,
	// named values, never the whole store.
	State map[string]any `json:"state,omitempty"`
	// Feedback is what the page currently tells its user (toasts, banners,
	// validation messages).
	Feedback []Feedback `json:"feedback,omitempty"`
	// Unavailable lists things the page shows but cannot be used now.
	Unavailable []Unavailable `json:"unavailable,omitempty"`
}

// Action is one entry of the page's action registry.
type Action struct {
	// ID is the stable capability id. A row-level template is named
	// name@kind (update_note@order) and carries Record.
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema for the business input, compiled once and
	// enforced before the executor runs.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Effect is what the action does: "read", "write" or "destructive".
	Effect string `json:"effect,omitempty"`
	// Approval says whether a person must confirm: "none", "ask" or "always".
	Approval string `json:"approval,omitempty"`
	// Fidelity says how directly the action maps to the business operation
	// (for example "exact" or "approximate").
	Fidelity string `json:"fidelity,omitempty"`
	// Source names where the action comes from (a component, a module).
	Source string `json:"source,omitempty"`
	// ScopePath places the action in the page (region, then sub-area).
	ScopePath []string `json:"scopePath,omitempty"`
	// Handoff says the action ends by handing control to a person, and how.
	Handoff string `json:"handoff,omitempty"`
	// FlowSteps names the steps of a multi-step flow the action runs.
	FlowSteps []string `json:"flowSteps,omitempty"`
	// Offscreen is true when the control for the action is not in view.
	Offscreen bool `json:"offscreen,omitempty"`
	// Record makes the action a folded per-record template.
	Record *RecordTemplate `json:"record,omitempty"`
}

// RecordTemplate marks an action as applying to each record of a kind. Invoke
// names the record in input[Param]; the kernel resolves the concrete action
// through Record.Actions and hands the executor the business input only.
type RecordTemplate struct {
	// Kind is the record kind the template applies to ("order").
	Kind string `json:"kind,omitempty"`
	// Param is the input key that names the record; default "record".
	Param string `json:"param,omitempty"`
	// Total counts the records the template can target now.
	Total int `json:"total"`
	// Offscreen counts those of them that are not in view.
	Offscreen int `json:"offscreen,omitempty"`
}

// Record is a stably referenceable view of a business object.
type Record struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind,omitempty"`
	Fields    map[string]any `json:"fields,omitempty"`
	Offscreen bool           `json:"offscreen,omitempty"`
	// Actions maps a template id to the concrete action id the executor runs
	// for this record. Nil means every template of the record's kind applies,
	// as "<template>:<record id>"; a non-nil map without a template's id means
	// that template does not apply to this record.
	Actions map[string]string `json:"actions,omitempty"`
}

// Region is a page area with business meaning.
type Region struct {
	ID          string `json:"id"`
	Label       string `json:"label,omitempty"`
	Description string `json:"description,omitempty"`
}

// Feedback is one message the page currently shows its user.
type Feedback struct {
	Level   string `json:"level,omitempty"`
	Message string `json:"message"`
	Record  string `json:"record,omitempty"`
}

// Unavailable names something listed on the page that cannot be used now, and why.
type Unavailable struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// ErrExecuteTimeout is the error a host answers an execute ask with when
// its time limit (Ask.Timeout) passed; Drive answers so itself.
var ErrExecuteTimeout = errors.New("surface: executor did not answer in time")

// Call is what the executor receives.
type Call struct {
	// Action is the concrete action id (for a template, the one resolved for
	// the target record).
	Action string
	// Input is the business input as a JSON object, without the record
	// parameter of a folded template.
	Input json.RawMessage
	// Context identifies the call for the page's own logging and checks.
	Context CallContext
}

// CallContext identifies who asked for a call. It carries ids, never credentials.
type CallContext struct {
	RequestID    string `json:"requestId"`
	Capability   string `json:"capability"`
	Record       string `json:"record,omitempty"`
	SessionID    string `json:"sessionId,omitempty"`
	AgentID      string `json:"agentId,omitempty"`
	UserID       string `json:"userId,omitempty"`
	DelegationID string `json:"delegationId,omitempty"`
}

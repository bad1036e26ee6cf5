//go:build js && wasm

package hostbridge

import (
	"maps"
	"math"
	"pling.dev/agent/internal/pagejson"
	"strconv"
	"syscall/js"

	"pling.dev/agent/surface"
)

// registry reads the host's version(), actions(), view() and optional
// expose().
//
// The kernel reads the registry up to three times per invoke, so the
// expensive part, parsing the actions and their schemas, is cached: it is
// redone only when version() answers something new, or (without version())
// when the text actions() returns differs from the last one.
type registry struct {
	lane lane
	// The host's functions, looked up once: a lookup by name costs a
	// crossing and a decode of the name on every call.
	version, actionsFn, view, expose js.Value
	hasVersion, hasExpose            bool

	key     string // version key of the cached actions; "" = none
	text    string // actions() text the cache was parsed from
	actions []surface.Action
	exposed map[string]bool // host expose() answers for the cached actions
	// gen names the cached actions together with the expose answers for
	// them; it moves on whenever either changes, and is handed to the
	// kernel as View.ActionsVersion so that the kernel derives each
	// session's capability list once per generation. It does not depend on
	// version(): without one, an actions() text and expose() answers equal
	// to the last ones keep the generation.
	gen    uint64
	genKey string
	views  textCache[surface.View]

	// The key of the last numeric version, by its bits (0 and -0 are two
	// keys): a version that did not change is not formatted again.
	numBits uint64
	numKey  string

	// Counters for tests and stats.
	actionsReads int // actions() calls
	actionsParse int // times the actions were parsed
}

func newRegistry(host js.Value, l lane) *registry {
	r := &registry{
		lane:      l,
		version:   hostFunc(host, "version"),
		actionsFn: hostFunc(host, "actions"),
		view:      hostFunc(host, "view"),
		expose:    hostFunc(host, "expose"),
	}
	r.hasVersion = r.version.Type() == js.TypeFunction
	r.hasExpose = r.expose.Type() == js.TypeFunction
	return r
}

func hasFunc(host js.Value, name string) bool {
	return hostFunc(host, name).Type() == js.TypeFunction
}

// hostFunc returns host[name] bound to host when it is a function, else
// undefined, so that the bridge calls it with Invoke.
func hostFunc(host js.Value, name string) js.Value {
	f, err := getProp(host, name)
	if err != nil || f.Type() != js.TypeFunction {
		return js.Undefined()
	}
	var bound js.Value
	if catch("bind "+name, func() { bound = theEnv().bind.Call("call", f, host) }) != nil {
		return js.Undefined()
	}
	return bound
}

// versionKey reads version() and turns it into a cache key. Only a finite
// number or a string is a usable version; anything else means "unknown",
// and the actions are read again.
func (r *registry) versionKey() (string, error) {
	if !r.hasVersion {
		return "", nil
	}
	var key string
	err := catch("registry.version", func() {
		v := r.version.Invoke()
		switch v.Type() {
		case js.TypeNumber:
			if f := v.Float(); !math.IsNaN(f) {
				key = r.numberKey(f)
			}
		case js.TypeString:
			key = "s" + v.String()
		}
	})
	return key, err
}

// numberKey is the cache key of a numeric version f.
func (r *registry) numberKey(f float64) string {
	if bits := math.Float64bits(f); r.numKey == "" || bits != r.numBits {
		r.numBits, r.numKey = bits, "n"+strconv.FormatFloat(f, 'g', -1, 64)
	}
	return r.numKey
}

// current returns the actions to use for one read, and their generation.
func (r *registry) current() ([]surface.Action, string, error) {
	key, err := r.versionKey()
	if err != nil {
		return nil, "", err
	}
	if key != "" && r.key == key && r.actions != nil {
		return r.actions, r.genKey, nil
	}

	// Page code that actions() runs may call back into the surface: nothing
	// read above is relied on across this call.
	text, err := r.lane.text("registry.actions", r.actionsFn)
	if err != nil {
		return nil, "", err
	}
	r.actionsReads++
	same := r.actions != nil && text == r.text
	acts := r.actions

	if !same {
		if acts, err = pagejson.ParseActions([]byte(text)); err != nil {
			return nil, "", newError("registry.actions", "actions are not valid JSON: "+err.Error())
		}
		if acts == nil {
			acts = []surface.Action{}
		}
	}
	var exposed map[string]bool
	if r.hasExpose {
		if exposed, err = r.readExpose(acts); err != nil {
			return nil, "", err
		}
	}

	if !same {
		r.actionsParse++
	}
	if !same || r.genKey == "" || (r.hasExpose && !maps.Equal(r.exposed, exposed)) {
		r.gen++
		r.genKey = "g" + strconv.FormatUint(r.gen, 10)
	}
	r.key, r.text, r.actions, r.exposed = key, text, acts, exposed
	return acts, r.genKey, nil
}

// readExpose asks the host's expose predicate about every action id in one
// call. It runs whenever actions() is read, so a predicate tied to the
// actions' version is evaluated once per version.
func (r *registry) readExpose(acts []surface.Action) (map[string]bool, error) {
	ids := make([]string, len(acts))
	for i := range acts {
		ids[i] = acts[i].ID
	}
	b, _ := surface.AppendJSON(nil, ids)
	text, err := r.lane.text("registry.expose", r.expose, b)
	if err != nil {
		return nil, err
	}
	answers, err := parseBools([]byte(text))
	if err != nil || len(answers) != len(ids) {
		return nil, newError("registry.expose", "expose() must answer one boolean per id")
	}
	out := make(map[string]bool, len(ids))
	for i, id := range ids {
		if answers[i] {
			out[id] = true
		}
	}
	return out, nil
}

// isExposed is the kernel's Expose predicate when the host has expose().
// An id missing from the latest answers is not exposed (fail closed).
func (r *registry) isExposed(id string) bool {
	return r.exposed[id]
}

// viewOf reads a view's text (bytes the caller reuses) with the actions
// in force, acts of generation gen.
func (r *registry) viewOf(text []byte, acts []surface.Action, gen string) (*surface.View, error) {
	parsed, ok := r.views.getBytes(text)
	if !ok {
		// Parsed from a copy: text is a reused buffer, and what is parsed may
		// keep slices of it (an action's inputSchema).
		t := string(text)
		var err error
		if parsed, err = pagejson.ParseView([]byte(t)); err != nil {
			return nil, newError("registry.view", "view is not valid JSON: "+err.Error())
		}
		parsed.Actions = nil
		r.views.put(t, parsed)
	}
	return r.viewWith(parsed, acts, gen), nil
}

// viewWith copies the cached view parsed with the actions in force.
func (r *registry) viewWith(parsed *surface.View, acts []surface.Action, gen string) *surface.View {
	view := *parsed
	// The kernel only reads the actions, so the cached slice is shared.
	view.Actions, view.ActionsVersion = acts, gen
	return &view
}

package mcpfacade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/client"
	"pling.dev/agent/surface"
)

// Defaults of Options.
const (
	DefaultPollInterval = 10 * time.Second
	DefaultSyncTimeout  = 30 * time.Second
	DefaultSyncGap      = 5 * time.Second
	// MaxSyncPause bounds how long a RATE_LIMITED answer to a sync stops
	// the facade from reading the list again: the retry time is the page's
	// to say, and a page saying 1e12 ms must not freeze the list. A
	// navigation ends the pause at once.
	MaxSyncPause = time.Minute
)

// JSON-RPC error codes of a tools/call or resources/read that did not reach
// an answer from the page. The surface's own code is always in the error's
// data, under "code"; clients branch on that.
const (
	// CodeSurfaceRefused: the surface refused a read of the context
	// resource (a protocol failure). A refused tool call is a tool result
	// with isError instead.
	CodeSurfaceRefused = -32000
	// CodePageUnreachable: nothing was sent, or the page is gone.
	CodePageUnreachable = -32001
	// CodeUnreadableReply: the page answered, and the answer was refused
	// (larger than the bound, or not the protocol's).
	CodeUnreadableReply = -32002
)

// Codes the facade itself puts in error data and structured content, next
// to the surface's and the page's own codes.
const (
	// OutcomeUnknown: an invoke was sent and no trustworthy answer came
	// back (a timeout, a navigation, a retry refused as a replay): the page
	// may or may not have run it.
	OutcomeUnknown = "OUTCOME_UNKNOWN"
	// PageUnreachable: the request never reached the page.
	PageUnreachable = "PAGE_UNREACHABLE"
	// InvalidArguments: the tool arguments could not be read at all.
	InvalidArguments = "INVALID_ARGUMENTS"
	// UnreadableReply: the page answered with something the facade
	// refused to read (larger than the bound, malformed, another app).
	UnreadableReply = "UNREADABLE_REPLY"
)

// Options configures a Facade. The zero value of every field is a
// documented default; New copies the struct.
type Options struct {
	// Implementation is what the server calls itself in initialize.
	// Default {Name: "pling-mcp", Version: "0.1.0"}.
	Implementation *mcp.Implementation
	// PollInterval is how often Run reads the capability list again, so
	// that a change made in the page (a new grant, a revocation, a filter)
	// reaches the client as tools/list_changed. Default 10s; negative: no
	// polling, only after calls that may change the list and on Kick. Every poll is one describe,
	// and the page's rate limit counts it like any other request.
	PollInterval time.Duration
	// SyncTimeout bounds one sync in Run. Default 30s.
	SyncTimeout time.Duration
	// RecordEnumLimit is how many record ids a template's record parameter
	// may list as an enum: the enum is given only when the page shows every
	// record and no more than this many have the template's kind. Default
	// 20, at most 100; negative: never.
	RecordEnumLimit int
	// Logger receives what the facade does. Default: nothing is logged.
	Logger *slog.Logger
	// SyncGap is the least time between two reads of the capability list
	// that nothing but the facade's own bookkeeping asked for (after a
	// navigation, a refusal that says the list is stale, a tools/list while
	// it may be stale): a page that reloads or changes its list in a storm
	// gets one read, and the client one tools/list_changed, per gap.
	// Default 5s.
	SyncGap time.Duration
	// Check, when set, is asked before every sync and every call whether
	// the page may be used now; Page.CheckOrigin is one. While it fails
	// the facade lists no page tools and refuses every call with its
	// error, and a sync after it passes again brings the tools back.
	Check func() error
}

// OriginError says the tab shows a document of another origin than the one
// the facade is bound to. Nothing is sent there. It matches client.ErrClosed:
// for the client, the bound page is gone.
type OriginError struct {
	Want  string // the bound origin: scheme://host:port of -url
	Found string // the origin the tab shows ("null" for an opaque one)
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("the tab shows %s, not %s: pling-mcp lists and calls nothing on another origin; bring the tab back to %s", e.Found, e.Want, e.Want)
}

// Unwrap makes the error match client.ErrClosed.
func (e *OriginError) Unwrap() error { return client.ErrClosed }

// OtherOrigin is the code in the error data of a call refused because the
// tab is on another origin.
const OtherOrigin = "OTHER_ORIGIN"

// CodeOtherOrigin is the JSON-RPC error code of such a call.
const CodeOtherOrigin = -32003

func originRefusal(oe *OriginError) *jsonrpc.Error {
	return wireError(CodeOtherOrigin, oe.Error(), map[string]any{"code": OtherOrigin, "origin": oe.Found, "boundOrigin": oe.Want})
}

// check runs Options.Check.
func (f *Facade) check() error {
	if f.opts.Check == nil {
		return nil
	}
	return f.opts.Check()
}

// Facade serves one page's surface as an MCP server: each effective
// capability is a tool, the page's context is a resource and a read-only
// tool. It holds no policy of its own: what is listed is what describe
// returns, and every call is an invoke that the page's surface decides on.
type Facade struct {
	c      *client.Client
	server *mcp.Server
	opts   Options
	kick   chan struct{}
	wake   chan struct{} // a navigation ends Run's wait

	syncMu sync.Mutex // one sync at a time, so tool sets apply in order

	mu          sync.Mutex
	tools       map[string]string   // tool name -> toolDef.key, as the server lists them
	pausedUntil time.Time           // a sync was refused with RATE_LIMITED
	lastErr     string              // the last sync error logged, to log each kind once
	recordIDs   map[string]struct{} // the record ids the last sync saw
	last        *surface.Description
	// stale counts what made the list possibly out of date (a call that
	// changed the page's state, a skipped poll); synced is the count the
	// last successful sync started from. They differ while the list may
	// be stale.
	stale, synced uint64
	lastSync      time.Time // when the last sync started
	lastAsked     time.Time // when the facade last sent the page anything
	reads         int       // describes spent on the list, for the log
}

// New returns a facade over c. Call Sync once before serving so the first
// tools/list is complete, and Run for the life of the server.
func New(c *client.Client, opts Options) *Facade {
	if opts.Implementation == nil {
		opts.Implementation = &mcp.Implementation{Name: "pling-mcp", Version: "0.1.0"}
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = DefaultSyncTimeout
	}
	if opts.SyncGap <= 0 {
		opts.SyncGap = DefaultSyncGap
	}
	switch {
	case opts.RecordEnumLimit == 0:
		opts.RecordEnumLimit = DefaultRecordEnumLimit
	case opts.RecordEnumLimit > maxRecordWindow:
		opts.RecordEnumLimit = maxRecordWindow
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f := &Facade{c: c, opts: opts, kick: make(chan struct{}, 1), wake: make(chan struct{}, 1), tools: map[string]string{}}
	f.server = mcp.NewServer(opts.Implementation, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{},
		},
	})
	f.server.AddReceivingMiddleware(f.refreshBeforeList)
	f.server.AddTool(contextTool(), f.callContext)
	f.server.AddResource(&mcp.Resource{
		URI:         ContextURI,
		Name:        "page-context",
		Title:       "Page context",
		Description: "What the page shows now: route, record ids, a window of records, state, notices, unavailable actions.",
		MIMEType:    "application/json",
	}, f.readContext)
	return f
}

const instructions = "These tools are the actions of a web page open in a browser, offered by the page itself. " +
	"Tools acting on one record take its id; read the ids with the " + ContextToolName + " tool. " +
	"Some actions need a person to approve them in the page: such a call returns at once and says the approval is pending. " +
	"The page decides what is callable; the list changes when it does."

// Server is the MCP server; connect it to a transport with Run or Connect.
func (f *Facade) Server() *mcp.Server { return f.server }

// Kick asks Run to sync soon: after SyncGap since the last read, so that
// kicks in a burst are one read. It never blocks.
func (f *Facade) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Navigated tells the facade that the tab shows another document: the
// list is read again (within SyncGap of the last read), and a pause a
// RATE_LIMITED answer asked for ends, since it was the old document's.
func (f *Facade) Navigated() {
	f.mu.Lock()
	f.pausedUntil = time.Time{}
	f.stale++
	f.mu.Unlock()
	f.Kick()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// markStale notes that the list may be out of date: the next tools/list
// reads it again.
func (f *Facade) markStale() {
	f.mu.Lock()
	f.stale++
	f.mu.Unlock()
}

// asked notes that the facade sent the page a request: a poll is spent only
// when the facade has been quiet for a whole PollInterval.
func (f *Facade) asked() {
	f.mu.Lock()
	f.lastAsked = time.Now()
	f.mu.Unlock()
}

// window is the record window a sync reads: just enough for the enums.
func (f *Facade) window() int {
	return max(f.opts.RecordEnumLimit, 0)
}

// Sync describes the page once and makes the server's tools match the
// capability list: tools that went are removed, new or changed ones are
// added, and the server sends tools/list_changed when anything changed. A
// session failure (revoked, expired, missing) removes every capability tool:
// nothing stays listed that the page would refuse.
//
// It reads the full list every time rather than asking the surface whether
// the list changed: the surface remembers the last list per session, and
// every other caller of the same session (the page's own console, a WebMCP
// bridge) moves that memory, so a change could go unseen.
func (f *Facade) Sync(ctx context.Context) error {
	return f.sync(ctx, "asked", false)
}

// sync is Sync, logged with its reason. With onlyIfStale it reads nothing
// when a sync that started after the list went stale has already read it:
// tools/list calls that wait on one another spend one read.
func (f *Facade) sync(ctx context.Context, reason string, onlyIfStale bool) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if err := f.check(); err != nil {
		f.apply(nil) // not the bound page: it offers nothing
		return err
	}
	f.mu.Lock()
	if onlyIfStale && f.stale == f.synced {
		f.mu.Unlock()
		return nil
	}
	gen := f.stale
	f.lastSync = time.Now()
	f.lastAsked = f.lastSync
	f.reads++
	reads := f.reads
	f.mu.Unlock()
	f.opts.Logger.Info("reading the capability list: one request of the page's rate budget", "reason", reason, "reads", reads)
	d, err := f.c.Describe(ctx, client.DescribeInput{Limit: new(f.window())})
	if err != nil {
		f.syncFailed(err)
		return err
	}
	defs := toolDefs(&d.Description, f.opts.RecordEnumLimit)
	if n := len(d.Capabilities) - len(defs); n > 0 {
		f.opts.Logger.Warn("capabilities not offered as tools: past the bounds on tools and schemas, or withheld", "count", n, "offered", len(defs))
	}
	f.apply(defs)
	ids := make(map[string]struct{}, len(d.Context.RecordIDs))
	for _, id := range d.Context.RecordIDs {
		ids[id] = struct{}{}
	}
	f.mu.Lock()
	f.recordIDs = ids
	f.last = &d.Description
	f.synced = max(f.synced, gen)
	f.mu.Unlock()
	return nil
}

// syncFailed decides what a failed sync means for the listed tools.
func (f *Facade) syncFailed(err error) {
	var perr *client.ProtocolError
	switch {
	case errors.As(err, &perr) && perr.Code == surface.CodeRateLimited:
		f.mu.Lock()
		f.pausedUntil = time.Now().Add(min(max(perr.RetryAfter, 0), MaxSyncPause))
		f.mu.Unlock()
	case errors.As(err, &perr) && isSessionCode(perr.Code),
		errors.Is(err, client.ErrAppMismatch),
		errors.Is(err, client.ErrClosed) && !errors.Is(err, client.ErrNavigated):
		// The session is gone, the page is another app, or the page
		// closed: the page offers nothing any more.
		f.apply(nil)
	}
}

func isSessionCode(c surface.Code) bool {
	switch c {
	case surface.CodeSessionRequired, surface.CodeSessionInvalid, surface.CodeSessionExpired, surface.CodeSessionRevoked:
		return true
	}
	return false
}

// refreshBeforeList reads the list again before a tools/list while it may
// be stale, so that a client asking gets the page's list without the
// facade spending a read after every call. Within SyncGap of the last read
// it asks Run to read it after the gap instead: the client then hears
// tools/list_changed if anything changed.
func (f *Facade) refreshBeforeList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			f.mu.Lock()
			stale := f.stale != f.synced
			soon := time.Since(f.lastSync) < f.opts.SyncGap || time.Now().Before(f.pausedUntil)
			f.mu.Unlock()
			switch {
			case !stale:
			case soon:
				f.Kick()
			default:
				sctx, cancel := context.WithTimeout(ctx, f.opts.SyncTimeout)
				f.logSync(f.sync(sctx, "tools/list while the list may be stale", true))
				cancel()
			}
		}
		return next(ctx, method, req)
	}
}

// apply makes the server's capability tools exactly defs.
func (f *Facade) apply(defs []toolDef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := make(map[string]bool, len(defs))
	for _, d := range defs {
		want[d.tool.Name] = true
	}
	var gone []string
	for name := range f.tools {
		if !want[name] {
			gone = append(gone, name)
			delete(f.tools, name)
		}
	}
	if len(gone) > 0 {
		f.server.RemoveTools(gone...)
		f.opts.Logger.Info("tools removed", "tools", gone)
	}
	for _, d := range defs {
		if f.tools[d.tool.Name] == d.key {
			continue
		}
		if err := f.addTool(d); err != nil {
			f.opts.Logger.Warn("capability not offered as a tool", "capability", pageText(d.capability, maxIDShown, false), "err", err)
			if _, had := f.tools[d.tool.Name]; had {
				f.server.RemoveTools(d.tool.Name)
				delete(f.tools, d.tool.Name)
			}
			continue
		}
		f.tools[d.tool.Name] = d.key
		f.opts.Logger.Info("tool offered", "tool", d.tool.Name, "capability", pageText(d.capability, maxIDShown, false))
	}
}

// addTool adds one tool. The SDK panics on a tool it cannot serve; what a
// page describes must never bring the facade down.
func (f *Facade) addTool(d toolDef) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f.server.AddTool(d.tool, f.callCapability(d.capability))
	return nil
}

// ToolNames returns the names of the capability tools listed now (the
// context tool excluded), for logs and tests.
func (f *Facade) ToolNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.tools))
	for n := range f.tools {
		names = append(names, n)
	}
	return names
}

// Run follows the page until ctx ends. It reads the list after a Kick or
// a Navigated, at most once per SyncGap however many came, and every
// PollInterval in which the facade sent the page nothing else (an agent's
// calls keep the page's budget for themselves; the list is then read on
// the next tools/list). After a sync refused with RATE_LIMITED it waits as
// long as the surface said, at most MaxSyncPause, or until a navigation.
func (f *Facade) Run(ctx context.Context) error {
	var tick <-chan time.Time
	if f.opts.PollInterval > 0 {
		t := time.NewTicker(f.opts.PollInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		reason := "a call or a navigation may have changed it"
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			f.mu.Lock()
			busy := time.Since(f.lastAsked) < f.opts.PollInterval
			if busy {
				f.stale++ // not read for a while: the next tools/list reads it
			}
			f.mu.Unlock()
			if busy {
				continue
			}
			reason = "poll"
		case <-f.kick:
		}
		for {
			f.mu.Lock()
			wait := max(time.Until(f.pausedUntil), time.Until(f.lastSync.Add(f.opts.SyncGap)))
			f.mu.Unlock()
			if wait <= 0 {
				break
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			case <-f.wake:
				t.Stop()
			}
		}
		select { // the kicks that came while waiting are this sync's
		case <-f.kick:
		default:
		}
		sctx, cancel := context.WithTimeout(ctx, f.opts.SyncTimeout)
		err := f.sync(sctx, reason, false)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err() // stopped mid-sync: nothing to report
		}
		f.logSync(err)
	}
}

// logSync logs a sync failure once per kind, and the recovery.
func (f *Facade) logSync(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	f.mu.Lock()
	changed := msg != f.lastErr
	f.lastErr = msg
	f.mu.Unlock()
	switch {
	case !changed:
	case err != nil:
		f.opts.Logger.Warn("cannot read the page's capabilities", "err", err)
	default:
		f.opts.Logger.Info("capabilities read again")
	}
}

// callCapability is the handler of the tool for one capability: the
// arguments, record parameter included, are the invoke's input as they are.
func (f *Facade) callCapability(capability string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var oe *OriginError
		if err := f.check(); errors.As(err, &oe) {
			f.Kick() // the list still shows the bound page's tools
			return nil, originRefusal(oe)
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		f.asked()
		r, err := f.c.Invoke(ctx, capability, args, client.InvokeOptions{})
		f.afterCall(r, err)
		return invokeResult(r, err, f.declaredApproval(capability))
	}
}

// declaredApproval is the approval the capability declared in the last
// list read, or "".
func (f *Facade) declaredApproval(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil {
		return ""
	}
	for _, c := range f.last.Capabilities {
		if c.ID == id {
			return c.Approval
		}
	}
	return ""
}

// afterCall decides what a call's outcome means for the tool list, so that
// no read of it (one describe, counted by the page's rate limit) is spent
// after a call. A refusal about the session or the capability says the
// list is stale: it is read soon, so that tools the page refuses go. Any
// other outcome that can have changed the list (a change of page state, a
// record new to the facade, an observation that was cut or missing) marks
// it stale, and the next tools/list reads it. Removed records the facade
// knows the kind of are taken out of the record enums at once, from the
// observation alone. Edited fields change no tool.
func (f *Facade) afterCall(r *client.Result, err error) {
	var perr *client.ProtocolError
	switch {
	case errors.As(err, &perr):
		switch {
		case perr.Code == surface.CodeRateLimited, perr.Code == surface.CodeInvalidRequest, perr.Code == surface.CodeReplayDetected:
		case isSessionCode(perr.Code), strings.HasPrefix(string(perr.Code), "CAPABILITY_"):
			f.Kick()
		default:
			f.markStale()
		}
		return
	case err != nil:
		f.markStale()
		return
	case r.Kind == client.BusinessFailure && r.After == nil:
		return // refused: nothing ran
	case r.After == nil:
		f.markStale()
		return
	}
	a := r.After
	if len(a.State) > 0 || a.StateOmitted > 0 || a.RecordsOmitted > 0 {
		f.markStale()
		return
	}
	var removed []string
	f.mu.Lock()
	for _, rec := range a.Records {
		if _, known := f.recordIDs[rec.ID]; !known {
			f.stale++ // new to the facade: a record enum may change
			f.mu.Unlock()
			return
		}
		if rec.Removed {
			removed = append(removed, rec.ID)
		}
	}
	f.mu.Unlock()
	if len(removed) > 0 {
		f.dropRecords(removed)
	}
}

// dropRecords takes removed records out of the last description and offers
// the tools it now gives, without reading the list. It does so only when
// that description held every record with its kind (then it knows which
// templates' counts and enums each one was in); otherwise it marks the list
// stale.
func (f *Facade) dropRecords(ids []string) {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	if last == nil || last.Context.RecordsTotal != len(last.Context.Records) {
		f.markStale()
		return
	}
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	d := *last
	d.Capabilities = slices.Clone(last.Capabilities)
	d.Context.Records = nil
	byKind := map[string]int{}
	offscreen := map[string]int{}
	for _, rec := range last.Context.Records {
		if !gone[rec.ID] {
			d.Context.Records = append(d.Context.Records, rec)
			continue
		}
		byKind[rec.Kind]++
		if rec.Offscreen {
			offscreen[rec.Kind]++
		}
		delete(gone, rec.ID)
	}
	if len(gone) > 0 { // a removed id the window did not hold
		f.markStale()
		return
	}
	dropped := len(last.Context.Records) - len(d.Context.Records)
	d.Context.RecordsTotal -= dropped
	d.Context.RecordIDs = slices.DeleteFunc(slices.Clone(last.Context.RecordIDs), func(id string) bool { return slices.Contains(ids, id) })
	d.Context.RecordIDsTotal -= len(last.Context.RecordIDs) - len(d.Context.RecordIDs)
	for i, c := range d.Capabilities {
		if c.Record == nil {
			continue
		}
		k := templateKind(c.ID)
		rec := *c.Record
		rec.Total = max(rec.Total-byKind[k], 0)
		rec.Offscreen = max(rec.Offscreen-offscreen[k], 0)
		d.Capabilities[i].Record = &rec
	}
	f.apply(toolDefs(&d, f.opts.RecordEnumLimit))
	f.mu.Lock()
	for _, id := range ids {
		delete(f.recordIDs, id)
	}
	f.last = &d
	f.mu.Unlock()
	f.opts.Logger.Info("record enums updated from a call's observation, with no read of the list", "removed", len(ids))
}

// invokeResult maps the outcome of an invoke onto MCP: a success, a
// business failure and the surface's refusal are tool results (the latter
// two with isError), each with a sentence a model can act on; what never
// reached a tool outcome (another origin, an unreachable page) is a
// JSON-RPC error. declared is the approval the capability declared.
func invokeResult(r *client.Result, err error, declared string) (*mcp.CallToolResult, error) {
	var unknown *client.OutcomeUnknownError
	var perr *client.ProtocolError
	var oe *OriginError
	switch {
	case errors.As(err, &oe):
		// Checked in the page before anything is posted: nothing was sent.
		return nil, originRefusal(oe)
	case errors.Is(err, ErrNotSent) && !(errors.As(err, &unknown) && unknown.Attempts > 1):
		// The page never saw it (browser mode), and no earlier attempt
		// went out: nothing ran.
		return nil, unreachable(err)
	case errors.As(err, &unknown):
		// Checked first: it may wrap a protocol failure (REPLAY_DETECTED
		// for a retry) that says nothing about the first attempt.
		return toolResult(true,
			"No trustworthy answer came back from the page, so it is not known whether this ran. "+
				"Read "+ContextToolName+" to see the page's state before calling again.",
			map[string]any{"code": OutcomeUnknown, "message": pageText(unknown.Err.Error(), maxMessageShown, false), "requestId": unknown.ID}), nil
	case errors.As(err, &perr) && perr.Code == surface.CodeInvalidRequest:
		return badInput(perr), nil
	case errors.As(err, &perr):
		return refusal(perr), nil
	case errors.Is(err, client.ErrInvalidInput):
		return badArguments(err), nil
	case err != nil:
		return nil, unreachable(err)
	}
	if r.Kind == client.BusinessFailure {
		code := businessCode(r.Code)
		out := map[string]any{"code": code, "requestId": r.ID}
		if r.Message != "" {
			out["message"] = pageText(r.Message, maxMessageShown, false)
		}
		if r.After != nil {
			out["after"] = r.After
		}
		msg := "The page refused the action"
		if code == UnknownCode {
			msg += " with a code that is not a plain error code (not shown)"
		} else {
			msg += " with its code " + code
		}
		return toolResult(true, msg+"."+pageMessage(r.Message), out), nil
	}
	out := map[string]any{"result": r.Value, "requestId": r.ID}
	if r.After != nil {
		out["after"] = r.After
	}
	if r.Approval != client.ApprovalNone {
		out["approval"] = string(r.Approval)
	}
	return toolResult(false, approvalText(r.Approval, declared), out), nil
}

// UnknownCode stands in structuredContent for a code the page sent that the
// facade does not echo: a protocol code outside the protocol's closed list,
// or a business code that is not a plain error code.
const UnknownCode = "UNKNOWN_CODE"

// maxMessageShown bounds a message of the page's in a result, in characters.
const maxMessageShown = 500

// businessCode is a business failure's code when it is a plain error code
// (A-Z, 0-9 and _, starting with a letter, at most 64), else UnknownCode:
// the executor chooses its codes, and a code is echoed where a model reads
// the facade's own words only when it cannot read as a sentence.
func businessCode(c string) string {
	if c == "" || len(c) > 64 || c[0] < 'A' || c[0] > 'Z' {
		return UnknownCode
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; !(b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			return UnknownCode
		}
	}
	return c
}

// protocolCode is a protocol failure's code when it is one of the
// protocol's closed list, else UnknownCode.
func protocolCode(c surface.Code) string {
	if slices.Contains(surface.Codes, c) {
		return string(c)
	}
	return UnknownCode
}

// pageMessage is the page's message set apart as the page's: labelled,
// quoted, bounded and visible, or "" when the page said nothing.
func pageMessage(m string) string {
	if strings.TrimSpace(m) == "" {
		return ""
	}
	return " The page's message (its own words, not pling-mcp's): " + pageQuote(m, maxMessageShown) + "."
}

// refusal is the tool result for the surface's refusal of a call: a
// sentence in the facade's voice that says what to do, the page's message
// set apart, and the code (of the closed list, else UnknownCode) and retry
// time in structuredContent. A refusal comes before the page's executor;
// INTERNAL_ERROR and an unknown code say nothing of that, so they are
// reported as not known to be done.
func refusal(perr *client.ProtocolError) *mcp.CallToolResult {
	code := protocolCode(perr.Code)
	out := map[string]any{"code": code}
	if perr.ID != "" {
		out["requestId"] = perr.ID
	}
	if perr.Message != "" {
		out["message"] = pageText(perr.Message, maxMessageShown, false)
	}
	if perr.RetryAfter > 0 {
		out["retryAfterMs"] = perr.RetryAfter.Milliseconds()
	}
	return toolResult(true, refusalText(surface.Code(code), perr.RetryAfter)+pageMessage(perr.Message), out)
}

// refusalText is what the facade says of a refusal with a known code.
func refusalText(c surface.Code, retry time.Duration) string {
	const nothing = "; nothing was done."
	switch c {
	case surface.CodeRateLimited:
		return "Rate limited by the page: retry after " + waitText(retry) + nothing
	case surface.CodeSessionRequired:
		return "The page has no session for the agent" + nothing + " A person has to grant the agent access in the page."
	case surface.CodeSessionInvalid:
		return "The page does not accept the agent's session" + nothing + " A person has to grant the agent access in the page again."
	case surface.CodeSessionExpired:
		return "The agent's session with the page has expired" + nothing + " A person has to grant the agent access in the page again."
	case surface.CodeSessionRevoked:
		return "A person revoked the agent's session in the page" + nothing + " Do not call the page's tools until access is granted again."
	case surface.CodeCapabilityNotExposed:
		return "The page does not offer this action to the agent now" + nothing + " The tool list is read again; list the tools to see what is offered."
	case surface.CodeReplayDetected:
		return "The page refused this request as a repeat of one it has already seen" + nothing + " Read " + ContextToolName + " to see whether the earlier one took effect."
	case surface.CodeRateLimitUnavailable:
		return "The page could not check its rate limit and refused" + nothing + " Try again later."
	case surface.CodeReplayGuardUnavailable:
		return "The page could not check its replay guard and refused" + nothing + " Try again later."
	case surface.CodeProtocolVersionUnsupported, surface.CodeMethodNotSupported:
		return "The page does not speak the protocol version or method pling-mcp sent" + nothing
	case surface.CodeInternalError:
		return "The page reported an internal error: it is not known whether this ran. Read " + ContextToolName + " before calling again."
	}
	return "The page refused with a code that is not the protocol's (not shown): treat it as not done, and read " + ContextToolName + " before calling again."
}

// waitText words a retry time, bounded: a page can ask for any.
func waitText(d time.Duration) string {
	switch s := (d + time.Second - 1) / time.Second; {
	case d <= 0:
		return "a moment"
	case d > 24*time.Hour:
		return "more than a day (as the page says)"
	default:
		return fmt.Sprintf("%d s", s)
	}
}

// approvalText says plainly whether the action took effect, as the page
// reports it: every approval is the page's claim, which pling-mcp cannot
// check, and reads as one. declared is the approval the capability
// declared ("", "none", "always", "ask" or the page's own).
func approvalText(a client.Approval, declared string) string {
	switch a {
	case client.ApprovalNone:
		return "Done."
	case client.ApprovalGranted:
		s := "Done, the page says: the page says a person approved it in the page (its claim; pling-mcp cannot check it)."
		if declared == "" || declared == "none" {
			s += " The page declares this action as needing no approval."
		}
		return s
	case client.ApprovalPending:
		return "Not done yet: a person has to approve this in the page first, and nothing has changed until they do. " +
			"Calling again does not speed it up. Read " + ContextToolName + " later to see whether it was approved."
	case client.ApprovalDenied:
		return "Not done: the page says a person declined it in the page. Nothing changed."
	default:
		return "Not known to be done: the page reported an approval status that is not known. " +
			"Treat it as not done, and read " + ContextToolName + " to check."
	}
}

// toolResult is a result with structured content and the same content as
// JSON text after a plain sentence, for clients that read only text. In
// that text every character that would not show as itself is escaped
// (\uXXXX), so the page's values, which the JSON holds as they are, hide
// nothing from a reader.
func toolResult(isError bool, text string, structured map[string]any) *mcp.CallToolResult {
	b, err := json.Marshal(structured)
	if err != nil {
		b = []byte("{}")
	}
	return &mcp.CallToolResult{
		IsError:           isError,
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: text + "\n" + visibleJSON(b)}},
	}
}

// visibleJSON escapes in JSON text every character that would not show as
// itself. Outside strings JSON text from json.Marshal holds none, so the
// text keeps its value.
func visibleJSON(b []byte) string {
	if !bytes.ContainsFunc(b, hidden) {
		return string(b)
	}
	var out strings.Builder
	for _, r := range string(b) {
		switch {
		case !hidden(r):
			out.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return out.String()
}

// badInput is the tool result for input the surface refused: the model
// reads the violations (each with its path) and can correct the call, as
// MCP prefers for input errors. Nothing ran.
func badInput(perr *client.ProtocolError) *mcp.CallToolResult {
	out := map[string]any{"code": perr.Code}
	if perr.Message != "" {
		out["message"] = pageText(perr.Message, maxMessageShown, false)
	}
	if perr.ID != "" {
		out["requestId"] = perr.ID
	}
	msg := "The page refused the arguments; nothing was done. Correct them and call again."
	if len(perr.Violations) > 0 {
		vs := perr.Violations[:min(len(perr.Violations), maxViolationsShown)]
		shown := make([]surface.Violation, len(vs))
		for i, v := range vs {
			shown[i] = surface.Violation{InstancePath: pageText(v.InstancePath, maxIDShown, false), Keyword: pageText(v.Keyword, maxIDShown, false), Message: pageText(v.Message, maxIDShown, false)}
			msg += fmt.Sprintf("\n- at %s (%s): %s", pageQuote(v.InstancePath, maxIDShown), pageText(v.Keyword, maxIDShown, false), pageText(v.Message, maxIDShown, false))
		}
		if len(perr.Violations) > len(vs) {
			msg += fmt.Sprintf("\n- and %d more", len(perr.Violations)-len(vs))
		}
		out["violations"] = shown
	} else {
		msg += pageMessage(perr.Message)
	}
	return toolResult(true, msg, out)
}

// maxViolationsShown bounds the violations a result lists.
const maxViolationsShown = 20

// badArguments is the tool result for arguments the facade could not read
// at all. Nothing was sent.
func badArguments(err error) *mcp.CallToolResult {
	return toolResult(true, "The arguments could not be read; nothing was done: "+err.Error(),
		map[string]any{"code": InvalidArguments, "message": err.Error()})
}

// protocolError is the JSON-RPC error for a surface's refusal of a read of
// the resource, which is no tool outcome: the code of the closed list (else
// UnknownCode) and the page's message, bounded and visible, in data.
func protocolError(perr *client.ProtocolError) *jsonrpc.Error {
	code := protocolCode(perr.Code)
	data := map[string]any{"code": code}
	if perr.Message != "" {
		data["message"] = pageText(perr.Message, maxMessageShown, false)
	}
	if perr.ID != "" {
		data["requestId"] = perr.ID
	}
	if perr.RetryAfter > 0 {
		data["retryAfterMs"] = perr.RetryAfter.Milliseconds()
	}
	return wireError(CodeSurfaceRefused, refusalText(surface.Code(code), perr.RetryAfter)+pageMessage(perr.Message), data)
}

// rpcError is the JSON-RPC error for a describe that got no description.
func rpcError(err error) *jsonrpc.Error {
	var perr *client.ProtocolError
	var rerr *client.ReplyError
	var oe *OriginError
	switch {
	case errors.As(err, &oe):
		return originRefusal(oe)
	case errors.As(err, &perr):
		return protocolError(perr)
	case errors.As(err, &rerr):
		// The client's words, which may quote a few bytes of the page's:
		// bounded and made visible all the same.
		msg := pageText(rerr.Error(), maxMessageShown, false)
		return wireError(CodeUnreadableReply, "the page answered, and the answer was refused: "+msg,
			map[string]any{"code": UnreadableReply, "message": msg})
	}
	return unreachable(err)
}

// unreachable is the JSON-RPC error for a call that got no answer and
// cannot have run.
func unreachable(err error) *jsonrpc.Error {
	return wireError(CodePageUnreachable, "the page could not be reached: "+pageText(err.Error(), maxMessageShown, false), map[string]any{"code": PageUnreachable})
}

func wireError(code int64, msg string, data map[string]any) *jsonrpc.Error {
	b, err := json.Marshal(data)
	if err != nil {
		b = nil
	}
	return &jsonrpc.Error{Code: code, Message: msg, Data: b}
}

// contextArgs are the arguments of the context tool.
type contextArgs struct {
	Offset *int            `json:"offset"`
	Limit  *int            `json:"limit"`
	Record json.RawMessage `json:"record"`
}

// describeInput reads the context tool's arguments into describe's input.
// Only their shape is checked here; what they ask for is the surface's to
// accept or refuse.
func (a contextArgs) describeInput() (client.DescribeInput, error) {
	in := client.DescribeInput{Offset: a.Offset, Limit: a.Limit}
	rec := strings.TrimSpace(string(a.Record))
	switch {
	case rec == "" || rec == "null":
	case rec[0] == '"':
		var id string
		if err := json.Unmarshal(a.Record, &id); err != nil {
			return in, err
		}
		in.Records = []string{id}
	default:
		if err := json.Unmarshal(a.Record, &in.Records); err != nil {
			return in, errors.New("record must be an id or a list of ids")
		}
		if in.Records == nil {
			in.Records = []string{}
		}
	}
	return in, nil
}

func (f *Facade) callContext(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a contextArgs
	if req.Params != nil && len(req.Params.Arguments) > 0 {
		dec := json.NewDecoder(bytes.NewReader(req.Params.Arguments))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return badArguments(err), nil
		}
	}
	in, err := a.describeInput()
	if err != nil {
		return badArguments(err), nil
	}
	view, err := f.context(ctx, in)
	var perr *client.ProtocolError
	switch {
	case errors.As(err, &perr) && perr.Code == surface.CodeInvalidRequest:
		return badInput(perr), nil
	case errors.As(err, &perr):
		return refusal(perr), nil
	case err != nil:
		return nil, rpcError(err)
	}
	return toolResult(false, "The page now:", view), nil
}

func (f *Facade) readContext(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	view, err := f.context(ctx, client.DescribeInput{})
	if err != nil {
		return nil, rpcError(err)
	}
	b, err := json.Marshal(view)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: ContextURI, MIMEType: "application/json", Text: string(b),
	}}}, nil
}

// context describes with in and returns the view a reader gets: the app
// and the context, not the capabilities, which are the tools.
func (f *Facade) context(ctx context.Context, in client.DescribeInput) (map[string]any, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	f.asked()
	d, err := f.c.Describe(ctx, in)
	if err != nil {
		return nil, err
	}
	view := map[string]any{"context": d.Context}
	if d.App != "" {
		view["app"] = d.App
	}
	return view, nil
}

package mcpfacade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/client"
	"pling.dev/agent/surface"
)

// Defaults of Options.
const (
	DefaultPollInterval = 10 * time.Second
	DefaultSyncTimeout  = 30 * time.Second
)

// JSON-RPC error codes of a tools/call or resources/read that did not reach
// an answer from the page. The surface's own code is always in the error's
// data, under "code"; clients branch on that.
const (
	// CodeSurfaceRefused: the surface refused the request (a protocol
	// failure). Its INVALID_REQUEST, an input that failed the capability's
	// schema, gets jsonrpc.CodeInvalidParams instead.
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

	syncMu sync.Mutex // one sync at a time, so tool sets apply in order

	mu          sync.Mutex
	tools       map[string]string   // tool name -> toolDef.key, as the server lists them
	pausedUntil time.Time           // a sync was refused with RATE_LIMITED
	lastErr     string              // the last sync error logged, to log each kind once
	recordIDs   map[string]struct{} // the record ids the last sync saw
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
	switch {
	case opts.RecordEnumLimit == 0:
		opts.RecordEnumLimit = DefaultRecordEnumLimit
	case opts.RecordEnumLimit > maxRecordWindow:
		opts.RecordEnumLimit = maxRecordWindow
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f := &Facade{c: c, opts: opts, kick: make(chan struct{}, 1), tools: map[string]string{}}
	f.server = mcp.NewServer(opts.Implementation, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{},
		},
	})
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

// Kick asks Run to sync soon. It never blocks.
func (f *Facade) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
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
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if err := f.check(); err != nil {
		f.apply(nil) // not the bound page: it offers nothing
		return err
	}
	d, err := f.c.Describe(ctx, client.DescribeInput{Limit: new(f.window())})
	if err != nil {
		f.syncFailed(err)
		return err
	}
	f.apply(toolDefs(&d.Description, f.opts.RecordEnumLimit))
	ids := make(map[string]struct{}, len(d.Context.RecordIDs))
	for _, id := range d.Context.RecordIDs {
		ids[id] = struct{}{}
	}
	f.mu.Lock()
	f.recordIDs = ids
	f.mu.Unlock()
	return nil
}

// syncFailed decides what a failed sync means for the listed tools.
func (f *Facade) syncFailed(err error) {
	var perr *client.ProtocolError
	switch {
	case errors.As(err, &perr) && perr.Code == surface.CodeRateLimited:
		f.mu.Lock()
		f.pausedUntil = time.Now().Add(perr.RetryAfter)
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
			f.opts.Logger.Warn("capability not offered as a tool", "capability", d.capability, "err", err)
			if _, had := f.tools[d.tool.Name]; had {
				f.server.RemoveTools(d.tool.Name)
				delete(f.tools, d.tool.Name)
			}
			continue
		}
		f.tools[d.tool.Name] = d.key
		f.opts.Logger.Info("tool offered", "tool", d.tool.Name, "capability", d.capability)
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

// Run syncs every PollInterval and after every Kick (a tools/call that
// may change the list kicks) until ctx ends. After a sync refused with RATE_LIMITED it waits
// as long as the surface said before the next one.
func (f *Facade) Run(ctx context.Context) error {
	var tick <-chan time.Time
	if f.opts.PollInterval > 0 {
		t := time.NewTicker(f.opts.PollInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
		case <-f.kick:
		}
		f.mu.Lock()
		wait := time.Until(f.pausedUntil)
		f.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		sctx, cancel := context.WithTimeout(ctx, f.opts.SyncTimeout)
		err := f.Sync(sctx)
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
		r, err := f.c.Invoke(ctx, capability, args, client.InvokeOptions{})
		if f.mayChangeTools(r, err) {
			f.Kick()
		}
		return invokeResult(r, err)
	}
}

// mayChangeTools reports whether a call's outcome can have changed the tool
// list, so that a sync (one describe, counted by the page's rate limit) is
// spent only then. The after-observation says what the call changed: edited
// fields of records change no tool; a removed record, a change of page state
// (a filter, a page of results) or an observation that was cut can change
// which records a template reaches. A refusal about the session or the
// capability says the list is stale. Without an observation nothing is known,
// so the list is read again.
func (f *Facade) mayChangeTools(r *client.Result, err error) bool {
	var perr *client.ProtocolError
	switch {
	case errors.As(err, &perr):
		switch perr.Code {
		case surface.CodeRateLimited, surface.CodeInvalidRequest, surface.CodeReplayDetected:
			return false
		}
		return true
	case err != nil:
		return true
	case r.Kind == client.BusinessFailure && r.After == nil:
		return false // refused: nothing ran
	case r.After == nil:
		return true
	}
	a := r.After
	if len(a.State) > 0 || a.StateOmitted > 0 || a.RecordsOmitted > 0 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rec := range a.Records {
		if _, known := f.recordIDs[rec.ID]; rec.Removed || !known {
			return true // gone, or new to the facade: a record enum may change
		}
	}
	return false
}

// invokeResult maps the outcome of an invoke onto MCP: a success and a
// business failure are tool results (the latter with isError), a protocol
// failure is a JSON-RPC error carrying the surface's code.
func invokeResult(r *client.Result, err error) (*mcp.CallToolResult, error) {
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
			map[string]any{"code": OutcomeUnknown, "message": unknown.Err.Error(), "requestId": unknown.ID}), nil
	case errors.As(err, &perr) && perr.Code == surface.CodeInvalidRequest:
		return badInput(perr), nil
	case errors.As(err, &perr):
		return nil, protocolError(perr)
	case errors.Is(err, client.ErrInvalidInput):
		return badArguments(err), nil
	case err != nil:
		return nil, unreachable(err)
	}
	if r.Kind == client.BusinessFailure {
		out := map[string]any{"code": r.Code, "message": r.Message, "requestId": r.ID}
		if r.After != nil {
			out["after"] = r.After
		}
		return toolResult(true, "The page refused: "+r.Code+": "+r.Message, out), nil
	}
	out := map[string]any{"result": r.Value, "requestId": r.ID}
	if r.After != nil {
		out["after"] = r.After
	}
	if r.Approval != client.ApprovalNone {
		out["approval"] = string(r.Approval)
	}
	return toolResult(false, approvalText(r.Approval), out), nil
}

// approvalText says plainly whether the action took effect.
func approvalText(a client.Approval) string {
	switch a {
	case client.ApprovalNone:
		return "Done."
	case client.ApprovalGranted:
		return "Done: a person approved it in the page."
	case client.ApprovalPending:
		return "Not done yet: a person has to approve this in the page first, and nothing has changed until they do. " +
			"Calling again does not speed it up. Read " + ContextToolName + " later to see whether it was approved."
	case client.ApprovalDenied:
		return "Not done: a person declined it in the page. Nothing changed."
	default:
		return "Not known to be done: the page reported an approval status that is not known. " +
			"Treat it as not done, and read " + ContextToolName + " to check."
	}
}

// toolResult is a result with structured content and the same content as
// JSON text after a plain sentence, for clients that read only text.
func toolResult(isError bool, text string, structured map[string]any) *mcp.CallToolResult {
	b, err := json.Marshal(structured)
	if err != nil {
		b = []byte("{}")
	}
	return &mcp.CallToolResult{
		IsError:           isError,
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: text + "\n" + string(b)}},
	}
}

// badInput is the tool result for input the surface refused: the model
// reads the violations (each with its path) and can correct the call, as
// MCP prefers for input errors. Nothing ran.
func badInput(perr *client.ProtocolError) *mcp.CallToolResult {
	out := map[string]any{"code": perr.Code, "message": perr.Message}
	if perr.ID != "" {
		out["requestId"] = perr.ID
	}
	msg := "The page refused the arguments; nothing was done. Correct them and call again."
	if len(perr.Violations) > 0 {
		out["violations"] = perr.Violations
		for _, v := range perr.Violations {
			msg += fmt.Sprintf("\n- at %s (%s): %s", pageQuote(v.InstancePath, maxIDShown), pageText(v.Keyword, maxIDShown, false), pageText(v.Message, maxIDShown, false))
		}
	} else if perr.Message != "" {
		msg += " The page says: " + pageQuote(perr.Message, maxDescriptionShown)
	}
	return toolResult(true, msg, out)
}

// badArguments is the tool result for arguments the facade could not read
// at all. Nothing was sent.
func badArguments(err error) *mcp.CallToolResult {
	return toolResult(true, "The arguments could not be read; nothing was done: "+err.Error(),
		map[string]any{"code": InvalidArguments, "message": err.Error()})
}

// protocolError is the JSON-RPC error for a surface's protocol failure,
// with everything the surface said in data.
func protocolError(perr *client.ProtocolError) *jsonrpc.Error {
	data := map[string]any{"code": perr.Code, "message": perr.Message}
	if perr.ID != "" {
		data["requestId"] = perr.ID
	}
	if perr.RetryAfter > 0 {
		data["retryAfterMs"] = perr.RetryAfter.Milliseconds()
	}
	if len(perr.Violations) > 0 {
		data["violations"] = perr.Violations
	}
	code := int64(CodeSurfaceRefused)
	msg := string(perr.Code)
	if perr.Message != "" {
		msg += ": " + perr.Message
	}
	return wireError(code, msg, data)
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
		return wireError(CodeUnreadableReply, "the page answered, and the answer was refused: "+rerr.Error(),
			map[string]any{"code": UnreadableReply, "message": rerr.Error()})
	}
	return unreachable(err)
}

// unreachable is the JSON-RPC error for a call that got no answer and
// cannot have run.
func unreachable(err error) *jsonrpc.Error {
	return wireError(CodePageUnreachable, "the page could not be reached: "+err.Error(), map[string]any{"code": PageUnreachable})
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

package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"pling.dev/agent/surface"
)

// Options configures a Client. The zero value of every field is a
// documented default; New copies the struct.
type Options struct {
	// App is the application the client expects to reach. A description,
	// or a wrapped reply, from another app is refused with ErrAppMismatch.
	// Default "": any app. Set it whenever a page may carry several
	// surfaces.
	App string
	// Timeout bounds each attempt of a call (the caller's context bounds
	// the whole call, retries included). Default 10s; negative: only the
	// context bounds an attempt. A timed-out attempt is a transport failure
	// and is retried with the same id.
	Timeout time.Duration
	// Retries is how many times a call is sent again, with the same id,
	// after a transport failure (an error from the transport, or no reply
	// within Timeout). Default 2; negative: none. Replies are never retried:
	// a protocol failure such as RATE_LIMITED is returned to the caller.
	// A retried invoke is safe only because the surface's replay guard
	// refuses the id a second time; a page without a replay guard may run
	// a retried invoke twice.
	Retries int
	// Backoff is the wait before retry n (1 for the first). Default
	// 100ms·2^(n-1), at most 2s.
	Backoff func(retry int) time.Duration
	// NewID returns a fresh request id for each call. It must never repeat
	// within a session and must be safe for concurrent use. Default: IDPrefix, the time in base-36 milliseconds
	// and 128 random bits from crypto/rand.
	NewID func() string
	// IDPrefix starts every default id. Default "pling".
	IDPrefix string
	// Now is the clock the default ids read. Default time.Now.
	Now func() time.Time
	// MaxReplyBytes is the largest reply the client reads. Default 2 MiB,
	// twice the kernel's default response ceiling.
	MaxReplyBytes int
	// MaxRecords bounds the records one Records iteration reads: past it
	// the iteration ends with ErrRecordLimit, whatever total the page
	// claims. Default 1000; negative: no bound but the caller's context
	// and break.
	MaxRecords int
}

// Defaults of Options.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultRetries       = 2
	DefaultIDPrefix      = "pling"
	DefaultMaxReplyBytes = 2 << 20
	DefaultMaxRecords    = 1000
)

func defaultBackoff(retry int) time.Duration {
	if retry < 1 {
		retry = 1
	}
	if retry > 5 {
		return 2 * time.Second
	}
	return min(100*time.Millisecond<<(retry-1), 2*time.Second)
}

// Client calls one surface through a Transport. It is safe for concurrent
// use. It remembers the last full capability list and the record ids it was
// shown, for InvokeRecord and SyncCapabilities.
type Client struct {
	t    Transport
	opts Options

	closeOnce sync.Once
	closed    chan struct{}

	mu          sync.Mutex
	caps        []surface.Capability // the last full list; nil before the first
	route       string
	haveRoute   bool
	known       map[string]struct{} // record ids shown on this route
	knownFull   bool                // known reached maxKnownIDs and stopped growing
	idsComplete bool                // the last description listed every referenceable id
	reported    bool                // SyncCapabilities has answered once
	reportedSig string
}

// New returns a client that sends requests through t.
func New(t Transport, opts Options) *Client {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retries == 0 {
		opts.Retries = DefaultRetries
	} else if opts.Retries < 0 {
		opts.Retries = 0
	}
	if opts.Backoff == nil {
		opts.Backoff = defaultBackoff
	}
	if opts.IDPrefix == "" {
		opts.IDPrefix = DefaultIDPrefix
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		prefix, now := opts.IDPrefix, opts.Now
		opts.NewID = func() string {
			return prefix + "-" + strconv.FormatInt(now().UnixMilli(), 36) + "-" + rand.Text()
		}
	}
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if opts.MaxRecords == 0 {
		opts.MaxRecords = DefaultMaxRecords
	}
	return &Client{t: t, opts: opts, closed: make(chan struct{}), known: map[string]struct{}{}}
}

// Close makes every pending and later call fail with ErrClosed. It does not
// close the transport, which belongs to the caller. Close is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// DescribeInput is describe's optional input: Records (1 to 20 ids to read
// in full) or the Offset/Limit record window (nil: unset; Limit 0 asks for no
// records), and Changed to ask for an empty list when the capabilities are
// unchanged. The client sends Changed only once it holds a full list, and
// fills Capabilities from that list when the surface reports them unchanged.
type DescribeInput = surface.DescribeInput

// Description is a describe result with lookups for the common questions.
type Description struct {
	surface.Description
	// RequestID is the id of the describe that produced it.
	RequestID string `json:"-"`
}

// Capability returns the capability with id, if the description lists it.
func (d *Description) Capability(id string) (surface.Capability, bool) {
	for _, c := range d.Capabilities {
		if c.ID == id {
			return c, true
		}
	}
	return surface.Capability{}, false
}

// Referenceable reports whether the description offers recordID, and
// whether it can tell: an id in its recordIds or its records is offered;
// any other is not, known only when recordIds lists every id
// (recordIdsTotal). testdata/rules/referenceable.json holds the rule, which
// the JavaScript client runs too.
func (d *Description) Referenceable(recordID string) (offered, known bool) {
	if slices.Contains(d.Context.RecordIDs, recordID) ||
		slices.ContainsFunc(d.Context.Records, func(r surface.RecordView) bool { return r.ID == recordID }) {
		return true, true
	}
	return false, d.Context.RecordIDsTotal <= len(d.Context.RecordIDs)
}

// Kind classifies an invoke that the surface accepted. A protocol failure is
// not a Kind: it is returned as a *ProtocolError.
type Kind string

const (
	// Success: the page's executor answered without a business error.
	// With Approval pending, denied or unknown the action has not (or not
	// knowably) taken effect; see Result.Completed.
	Success Kind = "success"
	// BusinessFailure: the executor answered with result.error.
	BusinessFailure Kind = "business_failure"
)

// method is a protocol method: version 0.1 has exactly two.
type method string

const (
	methodDescribe method = "describe"
	methodInvoke   method = "invoke"
)

// Approval is where a person's approval stands, as the result reports it.
type Approval string

const (
	// ApprovalNone: the result says nothing about approval.
	ApprovalNone    Approval = ""
	ApprovalPending Approval = "pending"
	ApprovalGranted Approval = "granted"
	ApprovalDenied  Approval = "denied"
	// ApprovalUnknown: the page reported a status the surface does not
	// know. It is not a grant.
	ApprovalUnknown Approval = "unknown"
)

// Result is an invoke the surface accepted.
type Result struct {
	// ID is the request id the result answers.
	ID   string
	Kind Kind
	// Value is the result exactly as the surface sent it.
	Value json.RawMessage
	// Code and Message describe a business failure.
	Code, Message string
	Approval      Approval
	// After is what the surface observed changing, when it says.
	After *surface.Observation
	// Attempts is how many times the request was sent (1 without retries).
	Attempts int
}

// Completed reports whether the action took effect as far as the result
// says: a success with no approval outstanding, denied or unknown.
func (r *Result) Completed() bool {
	return r.Kind == Success && (r.Approval == ApprovalNone || r.Approval == ApprovalGranted)
}

// InvokeOptions are the per-call options of Invoke and InvokeRecord.
type InvokeOptions struct {
	// ID is the request id to send. Default "": a new id. Set it only to
	// repeat an earlier call that ended with an *OutcomeUnknownError, with
	// that error's ID: the surface's replay guard then refuses it
	// (REPLAY_DETECTED) if the earlier call reached it, instead of running
	// the action again.
	ID string
}

type describeBody struct {
	Record       []string `json:"record,omitempty"`
	Offset       *int     `json:"offset,omitempty"`
	Limit        *int     `json:"limit,omitempty"`
	Capabilities string   `json:"capabilities,omitempty"`
}

type describeRequest struct {
	Protocol string        `json:"protocol"`
	ID       string        `json:"id"`
	Method   method        `json:"method"`
	Input    *describeBody `json:"input,omitempty"`
}

type invokeRequest struct {
	Protocol   string          `json:"protocol"`
	ID         string          `json:"id"`
	Method     method          `json:"method"`
	Capability string          `json:"capability"`
	Input      json.RawMessage `json:"input,omitempty"`
}

// Describe asks for the session's capabilities and a bounded view of the
// page. A protocol failure is a *ProtocolError; a reply that cannot be read,
// answers another id or comes from another app is a *ReplyError.
func (c *Client) Describe(ctx context.Context, in DescribeInput) (*Description, error) {
	c.mu.Lock()
	changed := in.Changed && c.caps != nil
	c.mu.Unlock()
	var body *describeBody
	if in.Records != nil || in.Offset != nil || in.Limit != nil || changed {
		body = &describeBody{Record: in.Records, Offset: in.Offset, Limit: in.Limit}
		if changed {
			body.Capabilities = "changed"
		}
	}
	id := c.opts.NewID()
	req, err := json.Marshal(describeRequest{Protocol: surface.Protocol, ID: id, Method: methodDescribe, Input: body})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	want := c.expect(id, methodDescribe)
	env, _, err := c.exchange(ctx, req, want)
	if err != nil {
		return nil, fmt.Errorf("client: describe (id %s): %w", brief(id), err)
	}
	if env.perr != nil {
		return nil, env.perr
	}
	d, err := parseDescription(env.result, want, changed)
	if err != nil {
		return nil, err
	}
	d.RequestID = id
	c.observe(d)
	return d, nil
}

// Invoke asks the surface to run one capability. input is nil (no input),
// a json.RawMessage or []byte holding a JSON object, or any value that
// encodes to a JSON object (a map[string]any, a struct).
//
// Exactly one of three things comes back: a *Result (Kind Success or
// BusinessFailure: check both, as with any ok: true reply), a
// *ProtocolError, or another error. Among the others, an
// *OutcomeUnknownError means the request may have run; any other error
// means nothing was sent.
func (c *Client) Invoke(ctx context.Context, capability string, input any, opts InvokeOptions) (*Result, error) {
	if capability == "" {
		return nil, fmt.Errorf("%w: capability is empty", ErrInvalidInput)
	}
	in, err := encodeInput(input)
	if err != nil {
		return nil, err
	}
	return c.invoke(ctx, capability, in, opts)
}

func (c *Client) invoke(ctx context.Context, capability string, in json.RawMessage, opts InvokeOptions) (*Result, error) {
	id := opts.ID
	if id == "" {
		id = c.opts.NewID()
	}
	req, err := json.Marshal(invokeRequest{Protocol: surface.Protocol, ID: id, Method: methodInvoke, Capability: capability, Input: in})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	env, attempts, err := c.exchange(ctx, req, c.expect(id, methodInvoke))
	unknown := func(err error) error {
		return &OutcomeUnknownError{ID: id, Capability: capability, Attempts: attempts, Err: err}
	}
	switch {
	case err != nil && attempts == 0:
		return nil, fmt.Errorf("client: invoke (id %s): %w", brief(id), err)
	case err != nil:
		return nil, unknown(err)
	case env.perr != nil && attempts > 1:
		// An earlier attempt got no answer and may have run: a refusal
		// now (REPLAY_DETECTED above all) says nothing about it.
		return nil, unknown(env.perr)
	case env.perr != nil:
		return nil, env.perr
	}
	r, err := invokeResult(env)
	if err != nil {
		return nil, unknown(err)
	}
	r.ID, r.Attempts = id, attempts
	return r, nil
}

// invokeResult reads the result and after of an accepted invoke.
func invokeResult(env *envelope) (*Result, error) {
	r, err := classifyResult(env.result)
	if err != nil {
		return nil, err
	}
	if env.after != nil {
		r.After = &surface.Observation{}
		if err := decode(env.after, r.After); err != nil {
			return nil, badReply("after does not have the expected shape")
		}
	}
	return r, nil
}

func (c *Client) expect(id string, m method) expect {
	return expect{id: id, method: m, app: c.opts.App, max: c.opts.MaxReplyBytes}
}

// encodeInput returns input as a JSON object, or nil for no input.
func encodeInput(input any) (json.RawMessage, error) {
	var raw []byte
	switch v := input.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil // a nil map or an empty message: no input
	}
	if detail := scanJSON(raw); detail != "" {
		return nil, fmt.Errorf("%w: %s", ErrInvalidInput, detail)
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("%w: input must be a JSON object", ErrInvalidInput)
	}
	return raw, nil
}

// exchange sends req until a reply arrives, a failure is final, or the
// retries are spent, always with the same bytes and so the same id. It
// returns how many attempts were handed to the transport.
func (c *Client) exchange(ctx context.Context, req []byte, want expect) (*envelope, int, error) {
	attempts := 0
	for {
		if attempts > 0 {
			if err := c.wait(ctx, c.opts.Backoff(attempts)); err != nil {
				return nil, attempts, err
			}
		} else if err := c.live(ctx); err != nil {
			return nil, 0, err
		}
		attempts++
		raw, err := c.roundTrip(ctx, req)
		if err == nil {
			env, err := parseEnvelope(raw, want)
			return env, attempts, err
		}
		// A *ReplyError from the transport is a reply that arrived and was
		// refused (larger than the bound, say): sending again would get it
		// again, and an invoke may have run.
		var rerr *ReplyError
		if attempts > c.opts.Retries || errors.Is(err, ErrClosed) || errors.As(err, &rerr) || ctx.Err() != nil {
			return nil, attempts, err
		}
	}
}

// live reports why no attempt may start now, if any.
func (c *Client) live(ctx context.Context) error {
	select {
	case <-c.closed:
		return fmt.Errorf("client closed: %w", ErrClosed)
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("client: call abandoned: %w", err)
	}
	return nil
}

// wait sleeps d before a retry, or less when the call ends first.
func (c *Client) wait(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-c.closed:
		}
	}
	return c.live(ctx)
}

type tripResult struct {
	reply []byte
	err   error
}

// roundTrip runs one attempt under Timeout. The transport runs in its own
// goroutine so that a transport that ignores its context cannot hold the
// call past its deadline or past Close.
func (c *Client) roundTrip(ctx context.Context, req []byte) ([]byte, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if c.opts.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
	}
	defer cancel()
	done := make(chan tripResult, 1) // buffered: a late answer never blocks
	go func() {
		var out tripResult
		defer func() {
			if r := recover(); r != nil {
				out = tripResult{err: fmt.Errorf("transport panicked: %v", r)}
			}
			done <- out
		}()
		out.reply, out.err = c.t.RoundTrip(actx, req)
	}()
	var out tripResult
	select {
	case out = <-done:
	case <-actx.Done():
	case <-c.closed:
		return nil, fmt.Errorf("client closed while waiting for a reply: %w", ErrClosed)
	}
	switch {
	case out.err == nil && out.reply != nil:
		return out.reply, nil // an answer that made it wins over a deadline that also passed
	case ctx.Err() != nil:
		return nil, fmt.Errorf("client: call abandoned: %w", ctx.Err())
	case actx.Err() != nil:
		return nil, fmt.Errorf("client: no reply within %s: %w", c.opts.Timeout, context.DeadlineExceeded)
	case out.err == nil:
		return nil, errors.New("client: transport returned no reply")
	}
	return nil, fmt.Errorf("client: transport: %w", out.err)
}

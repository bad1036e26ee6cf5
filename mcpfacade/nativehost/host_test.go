//go:build unix

package nativehost

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pling.dev/agent/client"
)

// bound is how long anything here may take before the test calls it a hang.
const bound = 5 * time.Second

// fakeBrowser runs RunHost in process, playing the browser on its stdin and
// stdout, with the extension's side in the test.
type fakeBrowser struct {
	toHost *io.PipeWriter
	msgs   chan map[string]any
	done   chan struct{} // closed when RunHost returned
	err    error         // what it returned
}

func startHost(t *testing.T, dir, origin string) *fakeBrowser {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	b := &fakeBrowser{toHost: inW, msgs: make(chan map[string]any, 64), done: make(chan struct{})}
	go func() {
		b.err = RunHost(origin, inR, outW, HostOptions{Dir: dir})
		outW.Close()
		close(b.done)
	}()
	go func() {
		defer close(b.msgs)
		for {
			m, err := ReadMessage(outR, MaxToBrowser)
			if err != nil {
				return
			}
			var v map[string]any
			if err := json.Unmarshal(m, &v); err != nil {
				t.Errorf("the host wrote %q, not a JSON object", m)
				return
			}
			b.msgs <- v
		}
	}()
	t.Cleanup(func() { b.close(t) })
	return b
}

// close ends the browser's side, as a browser closing the port does, and
// waits for the host to return.
func (b *fakeBrowser) close(t *testing.T) error {
	b.toHost.Close()
	select {
	case <-b.done:
		return b.err
	case <-time.After(bound):
		t.Fatal("the host did not stop after the browser closed its stdin")
	}
	return nil
}

func (b *fakeBrowser) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-b.msgs:
		if !ok {
			t.Fatal("the host closed its stdout")
		}
		return m
	case <-time.After(bound):
		t.Fatal("no message from the host")
	}
	return nil
}

// nextOf skips messages until one whose msg.type (or type) is typ.
func (b *fakeBrowser) nextOf(t *testing.T, typ string) map[string]any {
	t.Helper()
	for {
		m := b.next(t)
		if m["type"] == typ {
			return m
		}
		if inner, _ := m["msg"].(map[string]any); inner != nil && inner["type"] == typ {
			return m
		}
	}
}

func (b *fakeBrowser) send(t *testing.T, v any) {
	t.Helper()
	raw, _ := json.Marshal(v)
	if err := WriteMessage(b.toHost, raw, MaxFromBrowser); err != nil {
		t.Fatal(err)
	}
}

func readyHost(t *testing.T, dir string) *fakeBrowser {
	t.Helper()
	b := startHost(t, dir, ExtensionOrigin)
	if m := b.next(t); m["type"] != "host" || m["state"] != "ready" {
		t.Fatalf("the host's first message %v, want ready", m)
	}
	return b
}

func rtDir(t *testing.T) string {
	return filepath.Join(t.TempDir(), "rt")
}

// A host started by the browser for another extension, or by hand with
// another first argument, serves nothing: no directory, no socket, not a
// byte to its stdout.
func TestHostRefusesAnotherCaller(t *testing.T) {
	for _, origin := range []string{
		"chrome-extension://abcdefghijklmnopabcdefghijklmnop/",
		"chrome-extension://" + ExtensionID,        // without the slash the browser writes
		"chrome-extension://" + ExtensionID + "/x", // not an origin
		"CHROME-EXTENSION://" + strings.ToUpper(ExtensionID) + "/",
		"https://" + ExtensionID + "/",
		"",
	} {
		dir := rtDir(t)
		b := startHost(t, dir, origin)
		select {
		case <-b.done:
			if !errors.Is(b.err, ErrOtherCaller) {
				t.Errorf("%q: %v, want ErrOtherCaller", origin, b.err)
			}
		case <-time.After(bound):
			t.Fatalf("%q: the host serves", origin)
		}
		if m, ok := <-b.msgs; ok {
			t.Errorf("%q: the host wrote %v", origin, m)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: the host made %s (%v)", origin, dir, err)
		}
	}
}

// One host, two Links: each gets the answers to its own requests, both
// hear a change, and the extension learns who connected and who left.
func TestRelayBetweenLinksAndExtension(t *testing.T) {
	dir := rtDir(t)
	b := readyHost(t, dir)
	var changedA, changedB atomic.Int32
	la := Dial(LinkOptions{Dir: dir, Origin: "http://a.test", URL: "http://a.test/x", App: "orders", Client: func() string { return "client A" }, OnChange: func() { changedA.Add(1) }})
	defer la.Close()
	lb := Dial(LinkOptions{Dir: dir, Origin: "http://b.test", OnChange: func() { changedB.Add(1) }})
	defer lb.Close()
	hellos := map[float64]map[string]any{}
	for len(hellos) < 2 {
		m := b.nextOf(t, "hello")
		hellos[m["agent"].(float64)] = m["msg"].(map[string]any)
	}
	byOrigin := map[string]float64{}
	for agent, h := range hellos {
		byOrigin[h["origin"].(string)] = agent
	}
	if h := hellos[byOrigin["http://a.test"]]; h["client"] != "client A" || h["app"] != "orders" || h["url"] != "http://a.test/x" {
		t.Errorf("hello of A: %v", h)
	}
	// The extension answers each request with its own text, reversed.
	go func() {
		for m := range b.msgs {
			msg, _ := m["msg"].(map[string]any)
			if msg == nil || msg["type"] != "request" {
				continue
			}
			rs := []rune(msg["request"].(string))
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			b.send(t, map[string]any{"agent": m["agent"], "msg": map[string]any{"type": "reply", "id": msg["id"], "reply": string(rs)}})
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	errs := make(chan error, 20)
	for i := range 10 {
		for _, l := range []*Link{la, lb} {
			go func() {
				req := `{"n":` + strings.Repeat("7", i+1) + `}`
				got, err := l.RoundTrip(ctx, []byte(req))
				if err == nil && string(got) != `}`+strings.Repeat("7", i+1)+`:"n"{` {
					err = errors.New("a Link got another's answer: " + string(got))
				}
				errs <- err
			}()
		}
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	before := changedA.Load() + changedB.Load()
	b.send(t, map[string]any{"agent": 0, "msg": map[string]any{"type": "changed"}})
	deadline := time.Now().Add(bound)
	for changedA.Load()+changedB.Load() < before+2 {
		if time.Now().After(deadline) {
			t.Fatal("a change told to every agent did not reach both Links")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The browser closes the host (it quit, the extension reloaded or stopped):
// a call waiting fails at once with ErrLost, a new call is refused as not
// sent, and the Link connects again to the next host.
func TestLinkSurvivesHostRestart(t *testing.T) {
	dir := rtDir(t)
	b := readyHost(t, dir)
	var changes atomic.Int32
	l := Dial(LinkOptions{Dir: dir, Origin: "http://a.test", Redial: 50 * time.Millisecond, OnChange: func() { changes.Add(1) }})
	defer l.Close()
	b.nextOf(t, "hello")
	waiting := make(chan error, 1)
	go func() {
		_, err := l.RoundTrip(context.Background(), []byte(`{}`))
		waiting <- err
	}()
	b.nextOf(t, "request") // it reached the extension, which never answers
	start := time.Now()
	b.close(t)
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrLost) || !errors.Is(err, client.ErrClosed) {
			t.Errorf("the waiting call: %v, want ErrLost", err)
		}
		t.Logf("the waiting call failed %v after the host stopped", time.Since(start))
	case <-time.After(bound):
		t.Fatal("a call waited on past the host's end")
	}
	deadline := time.Now().Add(bound)
	for ok, _ := l.Connected(); ok; ok, _ = l.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("the Link still says it is connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err := l.RoundTrip(context.Background(), []byte(`{}`))
	var ns *NotSentError
	if !errors.As(err, &ns) || ns.Code != "NOT_CONNECTED" || !errors.Is(err, client.ErrClosed) {
		t.Errorf("a call with no host: %v", err)
	}
	b2 := readyHost(t, dir)
	b2.nextOf(t, "hello")
	if ok, why := l.Connected(); !ok {
		t.Errorf("not connected again: %s", why)
	}
}

// With no host at all, a call is refused at once and says what to do.
func TestLinkWithoutHost(t *testing.T) {
	l := Dial(LinkOptions{Dir: rtDir(t), Origin: "http://a.test"})
	defer l.Close()
	start := time.Now()
	_, err := l.RoundTrip(context.Background(), []byte(`{}`))
	var ns *NotSentError
	if !errors.As(err, &ns) || ns.Code != "NOT_CONNECTED" || !strings.Contains(err.Error(), "pling-mcp install") || time.Since(start) > time.Second {
		t.Errorf("%v after %v", err, time.Since(start))
	}
}

// A request larger than one message the browser takes is refused before
// it is sent: nothing reaches the extension.
func TestLinkRequestTooLarge(t *testing.T) {
	dir := rtDir(t)
	b := readyHost(t, dir)
	l := Dial(LinkOptions{Dir: dir, Origin: "http://a.test"})
	defer l.Close()
	b.nextOf(t, "hello")
	_, err := l.RoundTrip(context.Background(), []byte(`{"x":"`+strings.Repeat("a", MaxToBrowser)+`"}`))
	var ns *NotSentError
	if !errors.As(err, &ns) || ns.Code != "REQUEST_TOO_LARGE" {
		t.Fatalf("%v", err)
	}
	select {
	case m := <-b.msgs:
		t.Errorf("the extension received %.200v", m)
	case <-time.After(200 * time.Millisecond):
	}
}

// Whatever a process of this user writes on the socket, the host forwards
// only JSON objects within the bound and drops the connection otherwise.
func TestHostDropsGarbage(t *testing.T) {
	dir := rtDir(t)
	b := readyHost(t, dir)
	for _, payload := range []string{
		"not json\n",
		"[1,2,3]\n",
		`{"a":1} trailing` + "\n",
		`{"x":"` + strings.Repeat("a", MaxToBrowser) + `"}` + "\n",
	} {
		c, err := net.Dial("unix", filepath.Join(dir, SocketName))
		if err != nil {
			t.Fatal(err)
		}
		go c.Write([]byte(payload))
		c.SetReadDeadline(time.Now().Add(bound))
		// Closed: an end of file, or a reset when the host left unread bytes.
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%.20q: the host kept the connection (%v)", payload, err)
		}
		c.Close()
		if m := b.next(t); m["msg"].(map[string]any)["type"] != "gone" {
			t.Errorf("%.20q: the host forwarded %.200v", payload, m)
		}
	}
}

// A second browser (or profile) finds the socket taken and says so, leaving
// the first host alone; a socket left by a host that died is taken over.
func TestHostBusyAndStaleSocket(t *testing.T) {
	dir := rtDir(t)
	readyHost(t, dir)
	b2 := startHost(t, dir, ExtensionOrigin)
	if m := b2.next(t); m["type"] != "host" || m["state"] != "busy" {
		t.Errorf("the second host said %v", m)
	}
	<-b2.done
	if !errors.Is(b2.err, ErrBusy) {
		t.Errorf("the second host: %v", b2.err)
	}
	if c, err := net.Dial("unix", filepath.Join(dir, SocketName)); err != nil {
		t.Errorf("the first host stopped listening: %v", err)
	} else {
		c.Close()
	}

	stale := rtDir(t)
	if err := PrepareDir(stale); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(stale, SocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // the file stays, nobody listens
	readyHost(t, stale)
}

func TestFraming(t *testing.T) {
	// A length past the bound is refused from the header alone.
	r := io.MultiReader(strings.NewReader("\xff\xff\xff\xff"), neverEnding{})
	if _, err := ReadMessage(r, MaxFromBrowser); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 4 GiB announcement: %v", err)
	}
	var buf strings.Builder
	if err := WriteMessage(&buf, make([]byte, MaxToBrowser+1), MaxToBrowser); !errors.Is(err, ErrTooLarge) || buf.Len() != 0 {
		t.Errorf("writing past the browser's bound: %v, %d bytes written", err, buf.Len())
	}
	if err := WriteMessage(&buf, []byte(`{"a":1}`), MaxToBrowser); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMessage(strings.NewReader(buf.String()), 7)
	if err != nil || string(got) != `{"a":1}` {
		t.Errorf("round trip: %q %v", got, err)
	}
	if _, err := ReadMessage(strings.NewReader(buf.String()[:6]), 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut message: %v", err)
	}
}

// neverEnding would make a reader that trusted the length read forever.
type neverEnding struct{}

func (neverEnding) Read(p []byte) (int, error) { return len(p), nil }

// The extension's codes become the errors the client and the facade
// classify: only the not-sent ones match client.ErrClosed.
func TestRefusalCodes(t *testing.T) {
	l := &Link{opts: LinkOptions{MaxReplyBytes: 2 << 20}}
	var oe *OtherOriginError
	if err := l.refusal("OTHER_ORIGIN", "m", "https://evil.test"); !errors.As(err, &oe) || oe.Found != "https://evil.test" {
		t.Errorf("OTHER_ORIGIN: %v", err)
	}
	var re *client.ReplyError
	if err := l.refusal("REPLY_TOO_LARGE", "m", ""); !errors.As(err, &re) || !strings.Contains(err.Error(), "2097152") {
		t.Errorf("REPLY_TOO_LARGE: %v", err)
	}
	if err := l.refusal("NAVIGATED", "m", ""); !errors.Is(err, client.ErrNavigated) {
		t.Errorf("NAVIGATED: %v", err)
	}
	for code := range notSentCodes {
		if err := l.refusal(code, "m", ""); !errors.Is(err, client.ErrClosed) {
			t.Errorf("%s: %v", code, err)
		}
	}
	for _, code := range []string{"NO_ANSWER", "TIMEOUT", strings.Repeat("X", 10000)} {
		err := l.refusal(code, strings.Repeat("m", 10000), "")
		var pe *PageError
		if !errors.As(err, &pe) || errors.Is(err, client.ErrClosed) || len(err.Error()) > 700 {
			t.Errorf("%.20s: %.100v", code, err)
		}
	}
}

package nativehost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// HostName is the native messaging host's name, as the extension calls
// chrome.runtime.connectNative with it and the host manifest declares it.
const HostName = "dev.pling.mcp"

// ExtensionID is the Pling extension's id, fixed by the public key in its
// manifest (the first 32 hex digits of the key's SHA-256, written a-p).
const ExtensionID = "ogcgbdekdanimhdcpaacficmamnncdnh"

// ExtensionOrigin is the only caller the host serves: the browser passes
// the caller's origin as the host's first argument.
const ExtensionOrigin = "chrome-extension://" + ExtensionID + "/"

// ErrOtherCaller: the host was started for another extension (or by hand
// with another first argument). It serves nothing.
var ErrOtherCaller = errors.New("nativehost: started for another caller than the Pling extension")

// ErrOtherUser: the other end of a rendezvous connection runs as another
// user. The connection is closed unused.
var ErrOtherUser = errors.New("nativehost: the peer runs as another user")

// ErrBusy: another host, of another browser or profile, already listens on
// the socket. The extension is told so.
var ErrBusy = errors.New("nativehost: another browser already serves desktop agents on this socket")

// maxLine bounds one message on the rendezvous socket, both ways. A request
// must fit in one message to the browser with its wrapping, and a reply is
// at most what the browser may send.
const (
	maxRequestLine = MaxToBrowser - 64
	maxReplyLine   = MaxFromBrowser + 64
)

// HostOptions configures RunHost.
type HostOptions struct {
	// Dir is the rendezvous directory. Default Dir().
	Dir string
	// Log receives what the host does. Default: nothing. Never stdout,
	// which is the browser's.
	Log io.Writer
}

// RunHost is the native messaging host: origin is its first argument,
// which must be ExtensionOrigin; in and out are the browser's stdin and
// stdout. It listens on the rendezvous socket and relays between the
// extension and every Link that connects, until the browser closes in. It
// returns nil then.
func RunHost(origin string, in io.Reader, out io.Writer, opts HostOptions) error {
	if origin != ExtensionOrigin {
		return fmt.Errorf("%w: %q (want %s)", ErrOtherCaller, origin, ExtensionOrigin)
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	h := &host{out: out, log: log.New(logw, "pling-mcp host: ", log.LstdFlags), agents: map[int]*agentConn{}}
	dir := opts.Dir
	if dir == "" {
		d, err := Dir()
		if err != nil {
			h.tell(map[string]any{"type": "host", "state": "failed", "message": err.Error()})
			return err
		}
		dir = d
	}
	ln, err := listen(dir)
	if err != nil {
		state := "failed"
		if errors.Is(err, ErrBusy) {
			state = "busy"
		}
		h.tell(map[string]any{"type": "host", "state": state, "message": err.Error()})
		return err
	}
	h.ln = ln
	defer h.shutdown()
	h.tell(map[string]any{"type": "host", "state": "ready", "pid": os.Getpid(), "peerChecked": PeerChecked})
	h.log.Printf("listening on %s", ln.Addr())
	go h.accept()
	return h.fromBrowser(in)
}

// listen prepares dir and listens on its socket. A socket left by a host
// that is gone is replaced; one a live host answers on is left alone.
func listen(dir string) (*net.UnixListener, error) {
	if err := PrepareDir(dir); err != nil {
		return nil, err
	}
	path, err := SocketPath(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%w: %s is not a socket", ErrUnsafeDir, path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%w (%s)", ErrBusy, path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

type host struct {
	out   io.Writer
	outMu sync.Mutex
	log   *log.Logger
	ln    *net.UnixListener

	mu     sync.Mutex
	agents map[int]*agentConn
	next   int
	done   bool
}

type agentConn struct {
	id  int
	c   *net.UnixConn
	wmu sync.Mutex
}

// tell writes one message to the extension.
func (h *host) tell(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return h.tellRaw(b)
}

func (h *host) tellRaw(b []byte) error {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	return WriteMessage(h.out, b, MaxToBrowser)
}

// fromBrowser relays the extension's messages to the agents they name
// (agent 0: every agent) until the browser closes the stream.
func (h *host) fromBrowser(in io.Reader) error {
	for {
		b, err := ReadMessage(in, MaxFromBrowser)
		if errors.Is(err, io.EOF) {
			h.log.Printf("the browser closed the connection")
			return nil
		}
		if err != nil {
			return fmt.Errorf("nativehost: read from the browser: %w", err)
		}
		var m struct {
			Agent int             `json:"agent"`
			Msg   json.RawMessage `json:"msg"`
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.Msg) == 0 || m.Msg[0] != '{' {
			h.log.Printf("dropped a message from the browser that is not {agent, msg}")
			continue
		}
		var line bytes.Buffer
		if err := json.Compact(&line, m.Msg); err != nil {
			continue
		}
		line.WriteByte('\n')
		h.mu.Lock()
		var to []*agentConn
		if m.Agent == 0 {
			for _, a := range h.agents {
				to = append(to, a)
			}
		} else if a := h.agents[m.Agent]; a != nil {
			to = append(to, a)
		}
		h.mu.Unlock()
		for _, a := range to {
			h.send(a, line.Bytes())
		}
	}
}

// send writes one line to an agent; an agent that does not take it within
// a bound is dropped, so that it cannot hold the others up.
func (h *host) send(a *agentConn, line []byte) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := a.c.Write(line); err != nil {
		h.log.Printf("agent %d: %v; dropping it", a.id, err)
		a.c.Close()
	}
}

func (h *host) accept() {
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			return
		}
		if err := CheckPeer(c); err != nil {
			h.log.Printf("refused a connection: %v", err)
			c.Close()
			continue
		}
		h.mu.Lock()
		if h.done {
			h.mu.Unlock()
			c.Close()
			return
		}
		h.next++
		a := &agentConn{id: h.next, c: c}
		h.agents[a.id] = a
		h.mu.Unlock()
		go h.fromAgent(a)
	}
}

// fromAgent relays one agent's lines to the extension, each wrapped as
// {agent, msg}. A line that is not a JSON object, or is longer than a
// message the browser takes, ends the connection.
func (h *host) fromAgent(a *agentConn) {
	defer func() {
		a.c.Close()
		h.mu.Lock()
		delete(h.agents, a.id)
		done := h.done
		h.mu.Unlock()
		if !done {
			h.tell(map[string]any{"agent": a.id, "msg": map[string]any{"type": "gone"}})
		}
	}()
	r := bufio.NewReaderSize(a.c, 64<<10)
	prefix := []byte(`{"agent":` + strconv.Itoa(a.id) + `,"msg":`)
	for {
		line, err := readLine(r, maxRequestLine)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				h.log.Printf("agent %d: %v", a.id, err)
			}
			return
		}
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || !json.Valid(line) {
			h.log.Printf("agent %d sent something that is not a JSON object; dropping it", a.id)
			return
		}
		msg := append(append(append([]byte{}, prefix...), line...), '}')
		if err := h.tellRaw(msg); err != nil {
			h.log.Printf("agent %d: write to the browser: %v", a.id, err)
			return
		}
	}
}

// shutdown stops listening (removing the socket) and drops every agent.
func (h *host) shutdown() {
	h.ln.Close()
	h.mu.Lock()
	h.done = true
	for _, a := range h.agents {
		a.c.Close()
	}
	h.mu.Unlock()
}

// errLineTooLong: a line over the bound; the connection cannot go on.
var errLineTooLong = errors.New("nativehost: line longer than the bound")

// readLine reads one line of at most max bytes, without its newline. A
// longer one is refused once max bytes are held.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		if len(line)+len(chunk) > max {
			return nil, fmt.Errorf("%w (%d bytes)", errLineTooLong, max)
		}
		line = append(line, chunk...)
		if !isPrefix {
			return bytes.TrimSpace(line), nil
		}
	}
}

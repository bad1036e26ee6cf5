package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"pling.dev/agent/surface"
)

// TestTranscriptsThroughExports replays every golden transcript with the
// kernel in the wasip1 reactor: each request enters through pling_handle,
// every ask comes out through the host's wait import and is answered by
// the scene's fixture through pling_answer, and the reply comes back
// through reply. The replay must be byte for byte the native one and the
// golden file: the exported step ABI runs the same steps.
func TestTranscriptsThroughExports(t *testing.T) {
	if reactorErr != nil {
		t.Fatalf("building the wasip1 reactor: %v", reactorErr)
	}
	h := newReactorHost(t)
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			native, err := Run(golden)
			if err != nil {
				t.Fatal(err)
			}
			got, err := RunVia(golden, h.via)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, native) {
				t.Fatalf("the replay through the exports differs from the native one\n--- native\n%s\n+++ exports\n%s", native, got)
			}
			if err := compare(golden, got); err != nil {
				t.Errorf("the replay through the exports differs from the golden file:\n%v", err)
			}
		})
	}
}

// The reactor refuses what does not answer its ask: an unknown ticket, and
// a ticket already answered, each get -1 and change nothing.
func TestReactorRefusesStaleTickets(t *testing.T) {
	if reactorErr != nil {
		t.Fatalf("building the wasip1 reactor: %v", reactorErr)
	}
	h := newReactorHost(t)
	opts := []byte(`{"session":{"agentId":"a","sessionId":"s","userId":"u","expiresInMs":60000,"scope":["orders.search"]}}`)
	page, err := newScene([]byte("{}"), opts)
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.via(page.surf, opts, page.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	g := k.(*guestKernel)
	ctx := context.Background()
	req := []byte(`{"protocol":"pling.surface/0.1","id":"r","method":"describe"}`)
	if code := g.call(ctx, "pling_handle", uint64(g.slot), g.write(ctx, req), 1, 0); code != 0 {
		t.Fatalf("pling_handle = %d", code)
	}
	first := g.pending
	if first == nil || first.ask.Kind != surface.AskSession {
		t.Fatalf("first ask = %+v, want the session", first)
	}
	g.pending = nil
	if code := g.call(ctx, "pling_answer", uint64(first.ticket+100), 0); int32(code) != -1 {
		t.Fatalf("unknown ticket: %d, want -1", int32(code))
	}
	ans, _ := EncodeAnswer(page.surf.AnswerAsk(ctx, first.ask))
	if code := g.call(ctx, "pling_answer", uint64(first.ticket), g.write(ctx, ans)); code != 0 {
		t.Fatalf("pling_answer = %d", int32(code))
	}
	second := g.pending
	if second == nil || second.ask.Kind != surface.AskView {
		t.Fatalf("second ask = %+v, want the view", second)
	}
	if code := g.call(ctx, "pling_answer", uint64(first.ticket), g.write(ctx, ans)); int32(code) != -1 {
		t.Fatalf("repeated ticket: %d, want -1", int32(code))
	}
	if g.pending != second {
		t.Fatal("a refused answer moved the exchange")
	}
}

// reactorHost is one wazero runtime with the reactor compiled and the
// host module "pling" that guest kernels call.
type reactorHost struct {
	t        *testing.T
	rt       wazero.Runtime
	compiled wazero.CompiledModule
}

type kernelKey struct{}

func newReactorHost(t *testing.T) *reactorHost {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compilationCache))
	t.Cleanup(func() { _ = rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	on := func(ctx context.Context) *guestKernel { return ctx.Value(kernelKey{}).(*guestKernel) }
	_, err := rt.NewHostModuleBuilder("pling").
		NewFunctionBuilder().WithFunc(func(ctx context.Context) int64 {
		return on(ctx).now().UnixNano()
	}).Export("now").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module, token int32, ptr, n uint32) {
		g := on(ctx)
		b, _ := m.Memory().Read(ptr, n)
		g.replies[token] = append([]byte(nil), b...)
	}).Export("reply").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module, ticket, kind int32, ptr, n uint32) {
		g := on(ctx)
		b, _ := m.Memory().Read(ptr, n)
		a, err := DecodeAsk(b)
		if err != nil || int32(a.Kind) != kind || g.pending != nil {
			g.err = fmt.Errorf("bad wait: %v (kind %d, pending %v)", err, kind, g.pending != nil)
			return
		}
		// Answered once the export has returned: the host never calls
		// back into the module from inside one of its calls.
		g.pending = &waiting{ticket: ticket, ask: a}
	}).Export("wait").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := rt.CompileModule(ctx, reactorWasm)
	if err != nil {
		t.Fatalf("compiling the reactor: %v", err)
	}
	return &reactorHost{t: t, rt: rt, compiled: compiled}
}

// via starts a reactor instance for one scene.
func (h *reactorHost) via(native *surface.Surface, options []byte, now func() time.Time) (Kernel, error) {
	g := &guestKernel{native: native, now: now, replies: map[int32][]byte{}}
	ctx := g.ctx(context.Background())
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	mod, err := h.rt.InstantiateModule(ctx, h.compiled, cfg)
	if err != nil {
		return nil, err
	}
	h.t.Cleanup(func() { _ = mod.Close(context.Background()) })
	g.mod = mod
	slot := int32(g.call(ctx, "pling_new", g.write(ctx, options)))
	if slot <= 0 || g.err != nil {
		return nil, fmt.Errorf("pling_new = %d (%v)", slot, g.err)
	}
	g.slot = slot
	return g, nil
}

type waiting struct {
	ticket int32
	ask    surface.Ask
}

// guestKernel is one scene's kernel in a reactor instance.
type guestKernel struct {
	mod     api.Module
	native  *surface.Surface
	now     func() time.Time
	slot    int32
	token   int32
	replies map[int32][]byte
	pending *waiting
	err     error
}

func (g *guestKernel) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, kernelKey{}, g)
}

// call calls an export and answers its first result; a trap fails the
// scene.
func (g *guestKernel) call(ctx context.Context, name string, args ...uint64) uint64 {
	res, err := g.mod.ExportedFunction(name).Call(g.ctx(ctx), args...)
	if err != nil {
		g.err = errors.Join(g.err, fmt.Errorf("%s: %w", name, err))
		return ^uint64(0)
	}
	return res[0]
}

// write puts b where the reactor reads a call's text, and answers its
// length.
func (g *guestKernel) write(ctx context.Context, b []byte) uint64 {
	ptr := uint32(g.call(ctx, "pling_buf", uint64(len(b))))
	if len(b) > 0 && !g.mod.Memory().Write(ptr, b) {
		g.err = errors.Join(g.err, errors.New("pling_buf gave no room"))
	}
	return uint64(len(b))
}

// HandleJSON sends req through pling_handle and answers each ask the
// kernel hands to wait with the scene's fixture, until it replies.
func (g *guestKernel) HandleJSON(ctx context.Context, req []byte) []byte {
	g.token++
	token := g.token
	if code := g.call(ctx, "pling_handle", uint64(g.slot), g.write(ctx, req), uint64(token), 0); int32(code) != 0 {
		return []byte(fmt.Sprintf(`{"error":"pling_handle refused the request (%d): %v"}`, int32(code), g.err))
	}
	for g.pending != nil && g.err == nil {
		w := g.pending
		g.pending = nil
		ans, err := EncodeAnswer(g.native.AnswerAsk(ctx, w.ask))
		if err != nil {
			g.err = err
			break
		}
		if code := g.call(ctx, "pling_answer", uint64(w.ticket), g.write(ctx, ans)); int32(code) != 0 {
			g.err = errors.Join(g.err, fmt.Errorf("pling_answer refused ticket %d", w.ticket))
		}
	}
	out, ok := g.replies[token]
	if !ok || g.err != nil {
		return []byte(fmt.Sprintf(`{"error":"no reply: %v"}`, g.err))
	}
	delete(g.replies, token)
	return out
}

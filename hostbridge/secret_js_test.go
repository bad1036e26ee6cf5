//go:build js && wasm

package hostbridge

import (
	"os"
	"strings"
	"syscall/js"
	"testing"
)

// TestExportsNeedTheSecret: a script that got hold of the module's exports
// but not the per-load secret (the attacks of a glue that leaked them:
// answering a wait with its own text, entering a call under the token of
// one in flight, closing a surface) is refused by every export, and what
// it tried changes nothing: the real answer still lands, once.
func TestExportsNeedTheSecret(t *testing.T) {
	k := testSecret()
	if got := enterInit(k[0]+1, k[1]); got != entryRefused {
		t.Fatalf("a second pling_init answered %d, want refused", got)
	}
	h := waitHost(t)
	inst := create(t, h, Config{})
	slot := int32(inst.Get("slot").Int())
	p := inst.Call("handle", invokeReq("w", "orders.search", `{}`))
	ticket, _, _ := lastWait(t, h)
	js.CopyBytesToJS(h.Get("entryIO"), []byte(`{"title":"forged"}`))
	wrong := [][2]int32{{0, 0}, {k[0], k[1] + 1}, {k[0] + 1, k[1]}, {k[1], k[0]}}
	for _, w := range wrong {
		if got := enterAnswer(w[0], w[1], ticket, 18); got != entryRefused {
			t.Errorf("pling_answer with %v answered %d, want refused", w, got)
		}
		if got := enterHandle(w[0], w[1], slot, 2, 1, flagSession); got != entryRefused {
			t.Errorf("pling_handle with %v answered %d, want refused", w, got)
		}
		if got := enterDescribe(w[0], w[1], slot, -1, 1); got != entryRefused {
			t.Errorf("pling_describe with %v answered %d, want refused", w, got)
		}
		if got := enterClose(w[0], w[1], slot); got != entryRefused {
			t.Errorf("pling_close with %v answered %d, want refused", w, got)
		}
	}
	js.CopyBytesToJS(h.Get("entryIO"), []byte(`{"title":"real"}`))
	if got := testAnswer(ticket, 16); got != entryAccepted {
		t.Fatalf("the real answer was refused: %d", got)
	}
	if r := wait(t, p).String(); !strings.Contains(r, `"title":"real"`) {
		t.Fatalf("reply %s, want the real answer", r)
	}
}

// TestSlotsAndTicketsAreNotCounted: slots and tickets are drawn at random,
// so the last one seen does not name the next.
func TestSlotsAndTicketsAreNotCounted(t *testing.T) {
	a := create(t, host(t, `__t.host()`), Config{}).Get("slot").Int()
	b := create(t, host(t, `__t.host()`), Config{}).Get("slot").Int()
	if b == a+1 || b == a-1 {
		t.Errorf("slots %d then %d: counted", a, b)
	}
	h := waitHost(t)
	inst := create(t, h, Config{})
	inst.Call("handle", invokeReq("w1", "orders.search", `{}`))
	t1, _, _ := lastWait(t, h)
	inst.Call("handle", invokeReq("w2", "orders.search", `{}`))
	t2, _, _ := lastWait(t, h)
	if t2 == t1+1 || t2 == t1-1 {
		t.Errorf("tickets %d then %d: counted", t1, t2)
	}
	for _, tk := range []int32{t1, t2} {
		testAnswer(tk, codeTimedOut)
	}
}

// TestGlueProvidesEveryImport: js/pling-glue.js answers every import the
// Go toolchain's js/wasm programs ask of the "gojs" module (this test
// binary's are those of surface.wasm and more), so a Go release that adds
// or renames one fails here, not in a page.
func TestGlueProvidesEveryImport(t *testing.T) {
	wasm, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Skipf("the test binary is not readable here: %v", err)
	}
	glue := importJS(t, "../js/pling-glue.js")
	gojs := glue.Call("goGlue", js.Global().Get("Object").New()).Get("importObject").Get("gojs")
	u8 := js.Global().Get("Uint8Array").New(len(wasm))
	js.CopyBytesToJS(u8, wasm)
	wa := js.Global().Get("WebAssembly")
	imports := wa.Get("Module").Call("imports", wa.Get("Module").New(u8))
	asked := 0
	for i := 0; i < imports.Length(); i++ {
		im := imports.Index(i)
		if im.Get("module").String() != "gojs" {
			continue
		}
		asked++
		name := im.Get("name").String()
		if gojs.Get(name).Type() != js.TypeFunction {
			t.Errorf("the glue has no import %q", name)
		}
	}
	if asked < 20 {
		t.Fatalf("only %d gojs imports found", asked)
	}
}

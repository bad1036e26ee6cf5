package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// pFuzzPage is the spec page without the actions whose executor fails,
// panics or hangs, plus the schema-less echo actions: on this page an
// executor call always answers, so "ok:false" must mean "never executed".
func pFuzzPage() *surfacetest.Page {
	p := pSpecPage(5)
	for _, a := range pEchoPage(0).Actions {
		if strings.HasPrefix(a.ID, "p.") {
			p.Actions = append(p.Actions, a)
		}
	}
	p.Handlers["p.echo"] = func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"echoed":true}`), nil
	}
	p.Handlers["p.echo@order"] = p.Handlers["p.echo"]
	keep := p.Actions[:0]
	for _, a := range p.Actions {
		switch a.ID {
		case "orders.fail", "orders.panic", "orders.hang":
		default:
			keep = append(keep, a)
		}
	}
	p.Actions = keep
	return p
}

// pSeedRequests are the specification's request examples and hostile
// variations of them.
var pSeedRequests = []string{
	// 03 describe request.
	`{"protocol":"pling.surface/0.1","id":"req_01","method":"describe","input":{"limit":8,"capabilities":"full"}}`,
	// 02 invoke request.
	`{"protocol":"pling.surface/0.1","id":"req_01","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":"客户要求周五前回电"}}`,
	// 03 invoke request.
	pSpecInvoke03,
	// 04 minimal server invoke.
	`{"protocol":"pling.surface/0.1","id":"req-01","method":"invoke","capability":"orders.update_note@order","input":{"record":"SO-1002","note":"客户要求周五前回电"}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"describe"}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"record":["SO-1001","SO-1003"]}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"offset":2,"limit":3.0,"capabilities":"changed"}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"orders.search","input":{"query":"x"}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"p.echo","input":{"n":123456789012345678901234567890,"p":1.50}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"approve@order","input":{"record":"SO-1001"}}`,
	// Hostile.
	``, `null`, `[]`, `"x"`, `{}`, `{"id":""}`,
	`{"protocol":"pling.surface/0.2","id":"a","method":"describe"}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"attach"}`,
	`{"protocol":"pling.surface/0.1","id":"a","id":"b","method":"describe"}`,
	`{"protocol":"pling.surface/0.1","id":"a","ID":"b","method":"describe"}`,
	`{"protocol":"pling.surface/0.1","id":"\ud800","method":"describe"}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"p.echo","session":{"scope":["*"]}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","Note":"x","note":"y"}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"update_note@order:SO-1002","input":{"note":"x"}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"record":"SO-1001","offset":1}}`,
	`{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"limit":1e400}}`,
	strings.Repeat("[", 100) + strings.Repeat("]", 100),
	"\xef\xbb\xbf{}",
}

func FuzzHandle(f *testing.F) {
	for _, s := range pSeedRequests {
		f.Add([]byte(s))
	}
	page := pFuzzPage()
	s := pNewSurface(f, page, nil)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		before := len(page.Calls())
		r := s.Handle(ctx, data)
		ran := len(page.Calls()) - before
		if r == nil {
			t.Fatal("nil response")
		}
		m, ok := pDecode(t, s.Encode(r)).(map[string]any)
		if !ok {
			t.Fatal("response is not an object")
		}
		if err := pShapeError(m); err != nil {
			t.Fatal(err)
		}
		if r.OK && r.ID == "" {
			t.Error("ok response without an id")
		}
		if ran > 1 {
			t.Fatalf("executor ran %d times for one request", ran)
		}
		if !r.OK && ran != 0 {
			t.Fatalf("rejected request (%s) ran the executor", r.Error.Code)
		}
		if _, isDescribe := r.Result.(*surface.Description); isDescribe && ran != 0 {
			t.Fatal("describe ran the executor")
		}
	})
}

func FuzzDescribeInput(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"limit":8,"capabilities":"full"}`, `{"limit":0}`, `{"limit":3.0}`, `{"offset":28,"limit":100}`,
		`{"record":"SO-1002"}`, `{"record":["SO-1005","SO-1002","SO-9999"]}`, `{"capabilities":"changed"}`,
		`{"record":"SO-1001","limit":1}`, `{"limit":1.5}`, `{"limit":"3"}`, `{"limit":-1}`, `{"limit":1e400}`,
		`{"limit":1,"limit":2}`, `{"limit":1,"Limit":2}`, `{"bogus":1}`, `null`, `[]`, `{"record":[]}`,
		`{}, "capability":"p.echo"`, `{}, "method":"invoke"`, `{"offset":9007199254740991}`,
	} {
		f.Add([]byte(s))
	}
	const (
		n        = 30
		defLimit = 4
		maxLimit = 10
	)
	page := surfacetest.Orders(n)
	s := pNewSurface(f, page, func(o *surface.Options) {
		o.RecordLimit = defLimit
		o.MaxRecordLimit = maxLimit
	})
	ctx := context.Background()
	prefix := []byte(`{"protocol":"pling.surface/0.1","id":"f","method":"describe","input":`)
	f.Fuzz(func(t *testing.T, data []byte) {
		req := append(append(append([]byte(nil), prefix...), data...), '}')
		r := s.Handle(ctx, req)
		if !r.OK {
			if r.Error == nil || r.Error.Code != surface.CodeInvalidRequest {
				t.Fatalf("error = %+v, want INVALID_REQUEST or a description", r.Error)
			}
			return
		}
		d, ok := r.Result.(*surface.Description)
		if !ok {
			t.Fatalf("result is %T, want a description", r.Result)
		}
		if len(page.Calls()) != 0 {
			t.Fatal("describe ran the executor")
		}
		// An accepted envelope means data was exactly the input object.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var in map[string]any
		if err := dec.Decode(&in); err != nil || dec.More() {
			t.Fatalf("accepted input %q that is not one JSON object: %v", data, err)
		}
		got := make([]string, 0, len(d.Context.Records))
		for _, rec := range d.Context.Records {
			got = append(got, rec.ID)
		}
		if sel, ok := in["record"]; ok {
			var asked []string
			switch v := sel.(type) {
			case string:
				asked = []string{v}
			case []any:
				for _, e := range v {
					asked = append(asked, e.(string))
				}
			}
			var want []string
			for _, id := range asked {
				if page.Record(id) != nil && !slices.Contains(want, id) {
					want = append(want, id)
				}
			}
			if len(got) > surface.MaxRecordSelection || !slices.Equal(got, want) {
				t.Fatalf("records = %v, want %v", got, want)
			}
			return
		}
		offset, limit := 0, defLimit
		if v, ok := in["offset"]; ok {
			offset = pFuzzInt(t, v)
		}
		if v, ok := in["limit"]; ok {
			limit = min(pFuzzInt(t, v), maxLimit)
		}
		if len(got) > limit {
			t.Fatalf("%d records, more than the clamped limit %d", len(got), limit)
		}
		var want []string
		for i := offset; i < n && i < offset+limit; i++ {
			want = append(want, fmt.Sprintf("SO-%d", 1001+i))
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("records = %v, want %v", got, want)
		}
	})
}

// pFuzzInt reads an accepted offset or limit; anything but a non-negative
// integral number here means the kernel accepted what it must refuse.
func pFuzzInt(t *testing.T, v any) int {
	t.Helper()
	num, ok := v.(json.Number)
	if !ok {
		t.Fatalf("accepted a non-number %v", v)
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		t.Fatalf("accepted %s", num)
	}
	return int(f)
}

// FuzzReplyCap: whatever the request, under request bounds raised far past
// the smallest reply cap, the encoded reply fits the cap, is a response, and
// echoes an id only when the request is JSON whose one top-level "id" is
// that string and passes the id rules.
func FuzzReplyCap(f *testing.F) {
	for _, s := range pSeedRequests {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"protocol":"pling.surface/0.1","id":"` + strings.Repeat(`\u0001`, surface.MaxIDBytes) + `","method":"describe"}`))
	f.Add([]byte(`{"protocol":"pling.surface/0.1","id":"a","method":"describe","` + strings.Repeat("k", 8000) + `":1}`))
	f.Add([]byte(`{"protocol":"pling.surface/0.1","id":"a","method":"describe","Method":1}`))
	lim := surface.Limits{MaxRequestBytes: 1 << 20, MaxStringBytes: 1 << 20, MaxDepth: 64, MaxResponseBytes: surface.MinResponseBytes}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := pNewSurface(t, pFuzzPage(), func(o *surface.Options) { o.Limits = lim })
		out := s.HandleJSON(context.Background(), data)
		if len(out) > lim.MaxResponseBytes {
			t.Fatalf("reply of %d bytes over the cap %d", len(out), lim.MaxResponseBytes)
		}
		var resp struct {
			ID *string `json:"id"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.ID == nil {
			t.Fatalf("reply is not a response: %s", out)
		}
		id := *resp.ID
		if id == "" {
			return
		}
		var req map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // 1e400 is JSON, though not a float64
		if len(id) > surface.MaxIDBytes || dec.Decode(&req) != nil || req["id"] != id {
			t.Fatalf("reply echoes id %q that %q does not carry", id, data)
		}
	})
}

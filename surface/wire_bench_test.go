package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"pling.dev/agent/internal/pagejson"
	"strconv"
	"strings"
	"testing"

	"pling.dev/agent/surface"
)

// Benchmarks of the encoding and decoding the kernel does without
// reflection, each beside what encoding/json costs for the same bytes.
// Under GOOS=js the gap is what matters: reflection is several times
// slower there than natively.

// wBenchDescription is the description of the BenchmarkDescribe page (50
// actions, 8 of 48 records), decoded from the kernel's own answer.
func wBenchDescription(b *testing.B) *surface.Description {
	page, sess := cBenchPage(48, 50)
	f := cNewFix(b, page, surface.Options{Session: surface.StaticSession(sess)})
	r := f.handle(cDescribe("bench-encode"))
	cCheck(b, r, "")
	return r.Result.(*surface.Description)
}

func BenchmarkEncodeDescribeResponse(b *testing.B) {
	resp := &surface.Response{Protocol: surface.Protocol, ID: "bench", OK: true, Result: wBenchDescription(b)}
	want, _ := json.Marshal(resp)
	b.Run("encoder=AppendJSON", func(b *testing.B) {
		buf := make([]byte, 0, 2*len(want))
		if got, _ := surface.AppendJSON(buf, resp); !bytes.Equal(got, want) {
			b.Fatal("AppendJSON differs from encoding/json")
		}
		b.SetBytes(int64(len(want)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			buf, _ = surface.AppendJSON(buf[:0], resp)
		}
	})
	b.Run("encoder=encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(want)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = json.Marshal(resp)
		}
	})
}

// wViewText is a view as a page's JSON.stringify writes it: records of
// three fields, 48 record ids, regions and state.
func wViewText(records int) []byte {
	var recs, ids []string
	for i := 0; i < records; i++ {
		recs = append(recs, fmt.Sprintf(`{"id":"SO-%d","kind":"order","fields":{"customer":"Customer %d","amount":%d.5,"status":"open","note":""}}`, 1001+i, i, i))
	}
	for i := 0; i < 48; i++ {
		ids = append(ids, strconv.Quote(fmt.Sprintf("SO-%d", 1001+i)))
	}
	return []byte(`{"route":"/orders?status=all","regions":[{"id":"orders","label":"Orders","description":"Open orders"}],` +
		`"state":{"filter":"all","page":1,"rows":48},"feedback":[],"unavailable":[],"records":[` + strings.Join(recs, ",") +
		`],"recordIds":[` + strings.Join(ids, ",") + `],"recordIdsTotal":48,"recordsTotal":48}`)
}

func BenchmarkParseView(b *testing.B) {
	for _, n := range []int{1, 8} {
		text := wViewText(n)
		b.Run("records="+strconv.Itoa(n)+"/decoder=ParseView", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := pagejson.ParseView(text); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("records="+strconv.Itoa(n)+"/decoder=encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var v surface.View
				dec := json.NewDecoder(bytes.NewReader(text))
				dec.UseNumber()
				if err := dec.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDescribeVersioned is BenchmarkDescribe with a registry that
// names its actions' version, as the browser bridge's does: the capability
// list, its signature and its encoding are derived once, then reused.
func BenchmarkDescribeVersioned(b *testing.B) {
	page, sess := cBenchPage(48, 50)
	reg := func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
		v, err := page.View(ctx, q)
		if v != nil {
			v.ActionsVersion = "v1"
		}
		return v, err
	}
	f := cNewFix(b, page, surface.Options{Registry: reg, Session: surface.StaticSession(sess), OnAudit: cNoAudit})
	req := cDescribe("bench-describe")
	ctx := context.Background()
	cCheck(b, f.handle(req), "")
	buf := make([]byte, 0, 32<<10)
	b.Run("alloc=fresh", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			f.s.HandleJSON(ctx, req)
		}
	})
	b.Run("alloc=reused", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			x := f.s.Begin(buf[:0], req, true)
			f.s.Drive(ctx, x)
			buf, _, _ = x.Reply()
			x.Release()
		}
	})
}

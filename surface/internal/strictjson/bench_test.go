package strictjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

var envelopeLimits = Limits{MaxBytes: 1 << 20, MaxDepth: 64, MaxString: 1 << 16, MaxArray: 1024, MaxMembers: 256}

func BenchmarkDecodeEnvelope(b *testing.B) {
	data := []byte(envelopeInvoke)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data, envelopeLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeDeepHostile shows that 1 MiB of '[' costs only the bytes up
// to MaxDepth: the reported stop-offset is where the scan ended.
func BenchmarkDecodeDeepHostile(b *testing.B) {
	data := bytes.Repeat([]byte("["), 1<<20)
	lim := Limits{MaxBytes: 1 << 20, MaxDepth: 64}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var off int64
	for b.Loop() {
		_, err := Decode(data, lim)
		e, ok := err.(*Error)
		if !ok || e.Kind != KindTooDeep {
			b.Fatalf("got %v", err)
		}
		off = e.Offset
	}
	b.ReportMetric(float64(off), "stop-offset")
}

func BenchmarkCheckValueEnvelope(b *testing.B) {
	v, err := Decode([]byte(envelopeInvoke), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CheckValue(v, envelopeLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// Reference points only: encoding/json on the same inputs.
func BenchmarkStdlibUnmarshalEnvelope(b *testing.B) {
	data := []byte(envelopeInvoke)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibUnmarshalDeepHostile(b *testing.B) {
	data := bytes.Repeat([]byte("["), 1<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(data, &v); err == nil {
			b.Fatal("accepted")
		}
	}
}

// BenchmarkDecodeWideObject decodes one object of 10000 members, which goes
// through the fold-key set rather than pairwise comparison.
func BenchmarkDecodeWideObject(b *testing.B) {
	data := []byte("{" + manyKeys(10000) + "}")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

package sprint

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

type stringer struct{}

func (stringer) String() string { return "from String" }

type errAndStringer struct{}

func (errAndStringer) Error() string  { return "from Error" }
func (errAndStringer) String() string { return "from String" }

// The values recovered panics carry in practice must read as fmt reads
// them (under GOOS=js this compares sprint_js.go with fmt).
func TestSprintMatchesFmt(t *testing.T) {
	for _, v := range []any{
		nil, "", "boom", "with\nnewline", true, false,
		0, -1, math.MaxInt64, int8(-8), int16(16), int32(-32), int64(math.MinInt64),
		uint(1), uint8(255), uint16(65535), uint32(1 << 31), uint64(math.MaxUint64), uintptr(12),
		0.0, 1.5, -2.25e-10, 1e21, 1e20, math.Inf(1), math.Inf(-1), math.NaN(), float32(0.1), float32(3e38),
		errors.New("an error"), fmt.Errorf("wrapped: %w", errors.New("inner")), stringer{}, errAndStringer{},
		time.Duration(1500) * time.Millisecond,
	} {
		if got, want := Sprint(v), fmt.Sprint(v); got != want {
			t.Errorf("Sprint(%T) = %q, fmt says %q", v, got, want)
		}
	}
}

type myErr struct{}

func (*myErr) Error() string { panic("Error of a nil pointer") }

// A value whose method panics is still reported, not re-panicked.
func TestSprintSurvivesAPanickingMethod(t *testing.T) {
	var e *myErr
	if s := Sprint(e); s == "" {
		t.Fatal("empty text")
	}
}

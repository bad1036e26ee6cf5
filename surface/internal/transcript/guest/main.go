// Command guest replays one transcript read from stdin and writes the
// replayed transcript to stdout. The transcript tests build it with
// GOOS=wasip1 GOARCH=wasm and run it under wazero, to check that the kernel
// compiled to WebAssembly answers exactly as it does natively; it builds and
// runs natively too:
//
//	go run ./surface/internal/transcript/guest < surface/testdata/transcripts/sessions.txt
package main

import (
	"fmt"
	"io"
	"os"

	"pling.dev/agent/surface/internal/transcript"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	out, err := transcript.Run(in)
	if err != nil {
		fail(err)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "guest:", err)
	os.Exit(1)
}

package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// guestWasm is the guest built for GOOS=wasip1 in TestMain, or guestErr the
// reason it could not be built. The binary is too big to commit, and
// building it once per test binary keeps the cost to one go build.
var (
	guestWasm []byte
	guestErr  error
	// reactorWasm is ./reactor built as a wasip1 reactor, likewise.
	reactorWasm []byte
	reactorErr  error
)

// compilationCache is shared by every runtime of the test binary, so the
// guest is compiled to machine code once however many runtimes use it.
var compilationCache wazero.CompilationCache

func TestMain(m *testing.M) {
	guestWasm, guestErr = buildGuest()
	reactorWasm, reactorErr = buildWasip1("./reactor", "-buildmode=c-shared")
	compilationCache = newCompilationCache()
	code := m.Run()
	_ = compilationCache.Close(context.Background())
	os.Exit(code)
}

// goCommand runs the go command of the toolchain running the test, in this
// package's directory, with extra environment entries (later entries win).
func goCommand(env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr)
	}
	return out, nil
}

// buildGuest builds ./guest for wasip1.
func buildGuest() ([]byte, error) { return buildWasip1("./guest") }

// buildWasip1 builds pkg for wasip1 into a temporary directory it removes
// again, and returns the binary.
func buildWasip1(pkg string, flags ...string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "transcript-guest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "guest.wasm")
	env := []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"}
	args := append(append([]string{"build", "-trimpath", "-buildvcs=false"}, flags...), "-o", out, pkg)
	if _, err := goCommand(env, args...); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// newCompilationCache keeps compiled code in the user's cache directory
// when there is one. Under -race the compiler itself is instrumented and
// compiling the multi-megabyte guest takes the better part of a minute,
// while loading it back takes milliseconds. Entries are keyed by the
// module's hash; wazero cannot tell its own version inside a test binary (it
// files everything under "dev"), so the directory is named after the
// version go.mod selects, and an upgrade never loads another version's code.
func newCompilationCache() wazero.CompilationCache {
	if base, err := os.UserCacheDir(); err == nil {
		if v, err := goCommand(nil, "list", "-m", "-f", "{{.Version}}", "github.com/tetratelabs/wazero"); err == nil {
			dir := filepath.Join(base, "pling-agent", "wazero-"+strings.TrimSpace(string(v)))
			if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
				return c
			}
		}
	}
	return wazero.NewCompilationCache()
}

// TestTranscriptsUnderWasip1 replays every golden transcript inside the
// wasip1 build of the kernel, run by wazero, and requires the guest's output
// to be byte-for-byte the native replay and to match the golden file.
func TestTranscriptsUnderWasip1(t *testing.T) {
	if guestErr != nil {
		t.Fatalf("building the wasip1 guest: %v", guestErr)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compilationCache))
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	compiled, err := rt.CompileModule(ctx, guestWasm)
	if err != nil {
		t.Fatalf("compiling the guest: %v", err)
	}

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
			stdout, stderr, err := runGuest(ctx, rt, compiled, golden)
			if err != nil {
				t.Fatalf("guest failed: %v\nstderr:\n%s", err, stderr)
			}
			if !bytes.Equal(stdout, native) {
				t.Fatalf("the wasip1 replay differs from the native one\n--- native\n%s\n+++ wasip1\n%s\nstderr:\n%s", native, stdout, stderr)
			}
			if err := compare(golden, stdout); err != nil {
				t.Errorf("the wasip1 replay differs from the golden file:\n%v", err)
			}
		})
	}

	// The guest's own error path: a malformed transcript exits 1 with the
	// parser's message, so a broken file can never pass as empty output.
	t.Run("malformed transcript", func(t *testing.T) {
		stdout, stderr, err := runGuest(ctx, rt, compiled, []byte("no list here\n-- revoke --\n"))
		var exit *sys.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("guest error = %v, want exit code 1", err)
		}
		if len(stdout) != 0 || !bytes.Contains(stderr, []byte("prose list")) {
			t.Fatalf("stdout %q, stderr %q: want no output and the parser's message", stdout, stderr)
		}
	})
}

// runGuest runs one instance of the guest with stdin and returns what it
// wrote. Each instance is anonymous, so instances never clash by name.
func runGuest(ctx context.Context, rt wazero.Runtime, compiled wazero.CompiledModule, stdin []byte) (stdout, stderr []byte, err error) {
	var out, errOut bytes.Buffer
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs("guest").
		WithStdin(bytes.NewReader(stdin)).
		WithStdout(&out).
		WithStderr(&errOut).
		// Real clocks: the kernel's executor deadline runs on the Go
		// runtime's timers, which sleep through the host.
		WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	mod, err := rt.InstantiateModule(ctx, compiled, cfg)
	if mod != nil {
		_ = mod.Close(ctx)
	}
	return out.Bytes(), errOut.Bytes(), err
}

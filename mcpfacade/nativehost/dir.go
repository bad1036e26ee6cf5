package nativehost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
)

// DirEnv names the environment variable that overrides the rendezvous
// directory, for tests and for people who keep such sockets elsewhere. The
// browser passes its environment to the host it starts; an MCP client
// passes the server it starts only part of its own (the official SDKs keep
// HOME, PATH, USER and a few more), so set it in the client's config too.
const DirEnv = "PLING_MCP_RUNTIME_DIR"

// SocketName is the socket's name in the rendezvous directory.
const SocketName = "browser.sock"

// maxSocketPath is the longest socket path every supported system takes
// (sun_path holds 104 bytes on macOS, 108 on Linux, with the final NUL).
const maxSocketPath = 103

// ErrUnsafeDir says the rendezvous directory could be opened by someone
// other than its user: nothing is listened on or dialed there.
var ErrUnsafeDir = errors.New("nativehost: the rendezvous directory is not private to this user")

// Dir is the rendezvous directory. It depends on the user's id and home
// alone, not on variables an MCP client may drop from the environment of
// the server it starts: $PLING_MCP_RUNTIME_DIR when set; on Linux
// /run/user/<uid>/pling-mcp when the user's runtime directory exists, else
// ~/.cache/pling-mcp; on macOS ~/Library/Caches/pling-mcp.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return filepath.Abs(d)
	}
	if runtime.GOOS == "linux" {
		run := filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
		if fi, err := os.Stat(run); err == nil && fi.IsDir() && ownedByMe(fi) {
			return filepath.Join(run, "pling-mcp"), nil
		}
	}
	home := os.Getenv("HOME")
	if home == "" {
		u, err := user.Current()
		if err != nil {
			return "", fmt.Errorf("nativehost: no home directory: %w", err)
		}
		home = u.HomeDir
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Caches", "pling-mcp"), nil
	}
	return filepath.Join(home, ".cache", "pling-mcp"), nil
}

// SocketPath is the socket in dir, refused when the system cannot bind a
// path that long.
func SocketPath(dir string) (string, error) {
	p := filepath.Join(dir, SocketName)
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("nativehost: the socket path %s is %d bytes, longer than the %d a Unix socket takes: set %s to a shorter directory", p, len(p), maxSocketPath, DirEnv)
	}
	return p, nil
}

// PrepareDir creates dir with mode 0700 when it is missing, and checks it
// either way: a directory (not a link to one), owned by this user, that no
// one else may open or list. Its parents are created as the user's umask
// says.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("nativehost: create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("nativehost: create %s: %w", dir, err)
	}
	return CheckDir(dir)
}

// CheckDir checks dir as PrepareDir does, without creating it.
func CheckDir(dir string) error {
	if !ownersKnown {
		return fmt.Errorf("%w: browser mode runs on Linux and macOS, not on %s", ErrUnsafeDir, runtime.GOOS)
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link", ErrUnsafeDir, dir)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	case !ownedByMe(fi):
		return fmt.Errorf("%w: %s belongs to another user", ErrUnsafeDir, dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %04o; it must be 0700 (chmod 700 %s)", ErrUnsafeDir, dir, fi.Mode().Perm(), dir)
	}
	return nil
}

//go:build unix

package nativehost

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is the uid the tests run another user's process as.
const nobody = 65534

// A rendezvous directory that someone else could open is refused by both
// sides: the host does not listen there (and tells the extension why), and
// a Link does not dial there (and says why on every call).
func TestDirMustBePrivate(t *testing.T) {
	type setup func(t *testing.T, dir string)
	cases := map[string]setup{
		"group and others may enter": func(t *testing.T, dir string) { os.Chmod(dir, 0o755) },
		"others may enter":           func(t *testing.T, dir string) { os.Chmod(dir, 0o701) },
		"a link to a private directory": func(t *testing.T, dir string) {
			real := dir + "-real"
			if err := os.Mkdir(real, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, dir); err != nil {
				t.Fatal(err)
			}
		},
		"a file": func(t *testing.T, dir string) { os.WriteFile(dir, nil, 0o600) },
	}
	if os.Getuid() == 0 {
		cases["another user's"] = func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, prepare := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rt")
			if name != "a link to a private directory" && name != "a file" && name != "another user's" {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			prepare(t, dir)
			b := startHost(t, dir, ExtensionOrigin)
			m := b.next(t)
			select {
			case <-b.done:
			case <-time.After(bound):
				t.Fatalf("the host serves in %s; it said %v", dir, m)
			}
			if !errors.Is(b.err, ErrUnsafeDir) || m["state"] != "failed" || !strings.Contains(fmt.Sprint(m["message"]), "not private") {
				t.Errorf("the host: %v, told the extension %v", b.err, m)
			}
			if _, err := os.Lstat(filepath.Join(dir, SocketName)); err == nil {
				t.Errorf("a socket was made in %s", dir)
			}
			l := Dial(LinkOptions{Dir: dir, Origin: "http://a.test"})
			defer l.Close()
			_, err := l.RoundTrip(context.Background(), []byte(`{}`))
			var ns *NotSentError
			if !errors.As(err, &ns) || ns.Code != "NOT_CONNECTED" || !strings.Contains(err.Error(), "not private") {
				t.Errorf("the Link: %v", err)
			}
		})
	}
	t.Run("made private when missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "rt")
		readyHost(t, dir)
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", dir, fi.Mode(), err)
		}
		sock, err := os.Stat(filepath.Join(dir, SocketName))
		if err != nil || sock.Mode().Perm()&0o077 != 0 {
			t.Errorf("the socket: %v %v", sock.Mode(), err)
		}
	})
}

// Another user's process that reaches the socket anyway (the directory
// opened up after the host started listening) is turned away by its uid:
// not one of its bytes reaches the extension.
func TestHostRefusesAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	if !PeerChecked {
		t.Skip("this system does not tell a socket's peer")
	}
	dir := filepath.Join(openTempDir(t), "rt")
	b := readyHost(t, dir)
	sock := filepath.Join(dir, SocketName)
	// The mistake the check is for: the directory and socket opened to all.
	os.Chmod(dir, 0o755)
	os.Chmod(sock, 0o666)

	// The test binary, where nobody may run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(dir), "nativehost.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperDial$")
	cmd.Env = append(os.Environ(), "NATIVEHOST_DIAL="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), "DIALED") {
		t.Fatalf("the other user's process could not even dial (%v): %s", err, out)
	}
	if !strings.Contains(string(out), "CLOSED") {
		t.Errorf("the host kept another user's connection: %s", out)
	}
	select {
	case m := <-b.msgs:
		t.Errorf("the extension received %v from another user", m)
	case <-time.After(300 * time.Millisecond):
	}
}

// openTempDir is a temporary directory every user may enter.
func openTempDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "nativehost-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	os.Chmod(d, 0o755)
	return d
}

// TestHelperDial is the other user's process of TestHostRefusesAnotherUser.
func TestHelperDial(t *testing.T) {
	sock := os.Getenv("NATIVEHOST_DIAL")
	if sock == "" {
		t.Skip("a helper of TestHostRefusesAnotherUser")
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	fmt.Println("DIALED")
	c.Write([]byte(`{"type":"request","id":1,"request":"{}","origin":"http://a.test"}` + "\n"))
	c.SetReadDeadline(time.Now().Add(bound))
	_, err = bufio.NewReader(c).ReadByte()
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		fmt.Println("CLOSED")
	} else {
		fmt.Println("read:", err)
	}
}

// The extension's id is the one its manifest's key gives it, so the host
// manifest and the host's check name the extension a person loads.
func TestExtensionIDFromManifestKey(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "extension", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Key string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	der, err := base64.StdEncoding.DecodeString(m.Key)
	if err != nil || len(der) == 0 {
		t.Fatalf("the manifest's key: %v", err)
	}
	sum := sha256.Sum256(der)
	var id strings.Builder
	for _, c := range fmt.Sprintf("%x", sum[:16]) {
		if c <= '9' {
			id.WriteByte(byte('a' + c - '0'))
		} else {
			id.WriteByte(byte('a' + 10 + c - 'a'))
		}
	}
	if id.String() != ExtensionID {
		t.Errorf("the manifest's key gives %s, the host expects %s", id.String(), ExtensionID)
	}
}

func TestInstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	bin := filepath.Join(t.TempDir(), "pling-mcp")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb strings.Builder
		remove := args[0] == "uninstall"
		code := InstallMain(args[1:], remove, &out, &errb)
		return code, out.String(), errb.String()
	}

	// Nothing to install into: said, and nothing made.
	if code, _, e := run("install", "-host", bin); code != 1 || !strings.Contains(e, "-user-data-dir") {
		t.Errorf("no browser: %d %q", code, e)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("install made %v in an empty home", entries)
	}

	// Every browser whose user data exists, and only those.
	chromium := filepath.Join(home, ".config", "chromium")
	brave := filepath.Join(home, ".config", "BraveSoftware", "Brave-Browser")
	for _, d := range []string{chromium, brave} {
		os.MkdirAll(d, 0o700)
	}
	code, out, e := run("install", "-host", bin)
	if code != 0 {
		t.Fatalf("install: %d %s", code, e)
	}
	for _, d := range []string{chromium, brave} {
		p := filepath.Join(d, "NativeMessagingHosts", ManifestFile)
		if !strings.Contains(out, "wrote "+p) {
			t.Errorf("install did not say it wrote %s: %s", p, out)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Name, Path, Type string
			AllowedOrigins   []string `json:"allowed_origins"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m.Name != HostName || m.Path != bin || m.Type != "stdio" || len(m.AllowedOrigins) != 1 || m.AllowedOrigins[0] != ExtensionOrigin {
			t.Errorf("%s: %+v", p, m)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "google-chrome")); err == nil {
		t.Error("install made Chrome's directory, which did not exist")
	}

	// Named browsers are installed for even without their user data.
	if code, out, _ := run("install", "-host", bin, "-browser", "chrome,edge"); code != 0 ||
		!strings.Contains(out, filepath.Join(home, ".config", "google-chrome", "NativeMessagingHosts", ManifestFile)) ||
		!strings.Contains(out, filepath.Join(home, ".config", "microsoft-edge", "NativeMessagingHosts", ManifestFile)) {
		t.Errorf("-browser chrome,edge: %d %s", code, out)
	}
	if code, _, e := run("install", "-host", bin, "-browser", "firefox"); code != 2 || !strings.Contains(e, "firefox") {
		t.Errorf("-browser firefox: %d %s", code, e)
	}
	if code, _, e := run("install", "-host", filepath.Join(home, "missing")); code != 1 || !strings.Contains(e, "not an executable") {
		t.Errorf("a missing host binary: %d %s", code, e)
	}

	// A profile root of its own.
	udd := t.TempDir()
	if code, out, _ := run("install", "-host", bin, "-user-data-dir", udd); code != 0 || !strings.Contains(out, filepath.Join(udd, "NativeMessagingHosts", ManifestFile)) {
		t.Errorf("-user-data-dir: %d %s", code, out)
	}
	if code, out, _ := run("uninstall", "-user-data-dir", udd); code != 0 || !strings.Contains(out, "removed") {
		t.Errorf("uninstall -user-data-dir: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(udd, "NativeMessagingHosts", ManifestFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall left the manifest: %v", err)
	}
	if code, out, _ := run("uninstall"); code != 0 || strings.Count(out, "removed ") != 4 {
		t.Errorf("uninstall: %d %s", code, out)
	}
}

// The places on macOS, where this test cannot run install itself.
func TestHostDirsDarwin(t *testing.T) {
	dirs, labels, err := hostDirs("darwin", "/Users/p", "", []string{"chrome", "chromium", "edge", "brave"})
	want := []string{
		"/Users/p/Library/Application Support/Google/Chrome/NativeMessagingHosts",
		"/Users/p/Library/Application Support/Chromium/NativeMessagingHosts",
		"/Users/p/Library/Application Support/Microsoft Edge/NativeMessagingHosts",
		"/Users/p/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
	}
	if err != nil || strings.Join(dirs, "\n") != strings.Join(want, "\n") || len(labels) != 4 {
		t.Errorf("%v %v %v", dirs, labels, err)
	}
	if _, _, err := hostDirs("windows", "C:\\", "", nil); err == nil {
		t.Error("install claims to know Windows")
	}
}

package nativehost

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A Browser is where a Chromium-based browser keeps its user data by
// default, under the user's home, per system.
type Browser struct {
	Name          string
	Linux, Darwin string
}

// Browsers are the browsers install registers the host with.
var Browsers = []Browser{
	{"chrome", ".config/google-chrome", "Library/Application Support/Google/Chrome"},
	{"chromium", ".config/chromium", "Library/Application Support/Chromium"},
	{"edge", ".config/microsoft-edge", "Library/Application Support/Microsoft Edge"},
	{"brave", ".config/BraveSoftware/Brave-Browser", "Library/Application Support/BraveSoftware/Brave-Browser"},
}

// ManifestFile is the host manifest's file name in a NativeMessagingHosts
// directory: the host's name, as the browser looks it up.
const ManifestFile = HostName + ".json"

// Manifest is the host manifest for the binary at path.
func Manifest(path string) []byte {
	b, _ := json.MarshalIndent(map[string]any{
		"name":            HostName,
		"description":     "pling-mcp: lets desktop MCP clients use the pages a person opted in, through the Pling extension",
		"path":            path,
		"type":            "stdio",
		"allowed_origins": []string{ExtensionOrigin},
	}, "", "  ")
	return append(b, '\n')
}

// hostDirs are the NativeMessagingHosts directories for goos: under
// userDataDir when given, else under each named browser's default root
// (every browser whose root exists when names is empty, or forced).
func hostDirs(goos, home, userDataDir string, names []string) ([]string, []string, error) {
	if userDataDir != "" {
		return []string{filepath.Join(userDataDir, "NativeMessagingHosts")}, []string{"-user-data-dir"}, nil
	}
	if goos != "linux" && goos != "darwin" {
		return nil, nil, fmt.Errorf("pling-mcp install knows the browsers' places on Linux and macOS, not on %s", goos)
	}
	var dirs, labels []string
	for _, b := range Browsers {
		root := b.Linux
		if goos == "darwin" {
			root = b.Darwin
		}
		root = filepath.Join(home, filepath.FromSlash(root))
		if len(names) > 0 {
			found := false
			for _, n := range names {
				found = found || n == b.Name
			}
			if !found {
				continue
			}
		} else if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		dirs = append(dirs, filepath.Join(root, "NativeMessagingHosts"))
		labels = append(labels, b.Name)
	}
	if len(dirs) == 0 {
		var known []string
		for _, b := range Browsers {
			known = append(known, b.Name)
		}
		return nil, nil, fmt.Errorf("found the user data of none of %s under %s: start the browser once, or name it with -browser, or give -user-data-dir", strings.Join(known, ", "), home)
	}
	return dirs, labels, nil
}

// InstallMain runs `pling-mcp install` (or `uninstall` when remove) with
// args, printing what it wrote or removed on stdout. It returns the exit
// code.
func InstallMain(args []string, remove bool, stdout, stderr io.Writer) int {
	name := "install"
	if remove {
		name = "uninstall"
	}
	fset := flag.NewFlagSet("pling-mcp "+name, flag.ContinueOnError)
	fset.SetOutput(stderr)
	userDataDir := fset.String("user-data-dir", "", "the browser's user data directory (its --user-data-dir), instead of the default places")
	browsers := fset.String("browser", "", "comma-separated browsers among chrome, chromium, edge, brave (default: each whose user data exists)")
	hostPath := fset.String("host", "", "the pling-mcp binary the browser starts (default: this one)")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "pling-mcp %s: "+format+"\n", append([]any{name}, a...)...)
		return code
	}
	if fset.NArg() > 0 {
		return fail(2, "unexpected arguments %q", fset.Args())
	}
	var names []string
	if *browsers != "" {
		for _, n := range strings.Split(*browsers, ",") {
			n = strings.TrimSpace(strings.ToLower(n))
			ok := false
			for _, b := range Browsers {
				ok = ok || b.Name == n
			}
			if !ok {
				return fail(2, "-browser %q: not one of chrome, chromium, edge, brave", n)
			}
			names = append(names, n)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil && *userDataDir == "" {
		return fail(1, "%v", err)
	}
	dirs, labels, err := hostDirs(runtime.GOOS, home, *userDataDir, names)
	if err != nil {
		return fail(1, "%v", err)
	}
	if remove {
		for i, d := range dirs {
			p := filepath.Join(d, ManifestFile)
			switch err := os.Remove(p); {
			case err == nil:
				fmt.Fprintf(stdout, "removed %s (%s)\n", p, labels[i])
			case errors.Is(err, fs.ErrNotExist):
				fmt.Fprintf(stdout, "nothing at %s (%s)\n", p, labels[i])
			default:
				return fail(1, "%v", err)
			}
		}
		return 0
	}
	exe := *hostPath
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fail(1, "cannot tell where this binary is (%v): give -host PATH", err)
		}
	}
	if exe, err = filepath.Abs(exe); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
	}
	if fi, err := os.Stat(exe); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fail(1, "%s is not an executable file: give -host PATH", exe)
	}
	for i, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail(1, "%v", err)
		}
		p := filepath.Join(d, ManifestFile)
		if err := os.WriteFile(p, Manifest(exe), 0o644); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "wrote %s (%s): the browser starts %s for %s\n", p, labels[i], exe, ExtensionOrigin)
	}
	fmt.Fprintf(stdout, "restart the browser, or reload the Pling extension, so that it connects\n")
	return 0
}

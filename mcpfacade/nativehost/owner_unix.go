//go:build unix

package nativehost

import (
	"io/fs"
	"os"
	"syscall"
)

// ownersKnown says whether ownedByMe can tell.
const ownersKnown = true

// ownedByMe reports whether fi belongs to this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

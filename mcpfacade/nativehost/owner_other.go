//go:build !unix

package nativehost

import "io/fs"

// ownersKnown says whether ownedByMe can tell.
const ownersKnown = false

// ownedByMe cannot be told here: browser mode is for Linux and macOS.
func ownedByMe(fs.FileInfo) bool { return false }

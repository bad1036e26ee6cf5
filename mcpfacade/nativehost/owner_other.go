//go:build !unix

package nativehost

import "io/fs"

// ownedByMe cannot be told here: browser mode is for Linux and macOS.
func ownedByMe(fs.FileInfo) bool { return false }

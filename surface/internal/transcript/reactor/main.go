// Command reactor is the kernel built for GOOS=wasip1 as a reactor
// (-buildmode=c-shared) with the exports a page uses: pling_handle runs a
// request's steps and pling_answer gives one of them its answer. Every ask
// goes to the host's wait import, so the host answers each step; the
// transcript tests drive it under wazero and compare every reply, byte for
// byte, with the native kernel's (see ../steps.go).
//
// Natively it builds to a program that does nothing.
package main

func main() {}

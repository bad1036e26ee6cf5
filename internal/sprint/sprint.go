// Package sprint words a recovered panic value for an error message as
// fmt.Sprint does.
//
// The kernel and its WebAssembly bridge recover panics of host code and
// report them as errors ("registry panicked: ..."). fmt is what would word
// the value, but fmt works by reflection and is otherwise not needed in the
// js/wasm build, where it would add about 60 KB to the compressed module.
// Natively, Sprint is fmt.Sprint itself (sprint_std.go). Under js/wasm
// (sprint_js.go) it writes what fmt writes for the values panics carry in
// practice: strings, errors, Stringers, booleans and numbers
// (sprint_test.go compares them with fmt under GOOS=js); any other value
// is named by its type.
package sprint

// Command demo serves the assembled demo site (make site) on loopback.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"pling.dev/agent/internal/devserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (loopback by default)")
	dir := flag.String("dir", "build/site", "directory to serve")
	flag.Parse()

	if _, err := os.Stat(*dir); err != nil {
		log.Fatalf("demo: %v (run make site first)", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("demo: %v", err)
	}
	fmt.Printf("Pling agent surface demo: http://%s/\n", ln.Addr())
	log.Fatal(http.Serve(ln, devserver.Handler(*dir)))
}

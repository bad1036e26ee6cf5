//go:build unix

// Package redistest starts a throwaway redis-server for tests: on a free
// loopback port, with no persistence, stopped when the test ends. It needs
// Debian's redis-server on PATH (`make redis` installs it).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server process, restartable on its port.
type Server struct {
	Addr string
	port int
	dir  string
	cmd  *exec.Cmd
	tb   testing.TB
}

// Start starts a server for tb and stops it at tb's end. It fails tb when
// redis-server is missing: a test that needs Redis never passes without it.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	s.tb = tb
	tb.Cleanup(s.Close)
	return s
}

// New starts a server outside a test (the benchmarks); the caller stops it.
func New() (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("no redis-server on PATH: run `make redis` (or `make test`, which does): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "pling-redis-")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), port: port, dir: dir}
	if err := s.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	cmd := exec.Command("redis-server",
		"--save", "", "--appendonly", "no",
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--loglevel", "warning")
	// Its log (a warning about overcommit on most machines) is not the test's.
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ping(s.Addr) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("redis-server on %s did not answer PING", s.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the server (its data goes with it: nothing is persisted).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused server cannot exit
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Close stops the server for good and removes its directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.dir)
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.tb.Fatal(err)
	}
}

// Pause stalls the server (SIGSTOP): connections stay open, nothing answers.
func (s *Server) Pause() {
	s.tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.tb.Fatal(err)
	}
}

// Resume undoes Pause.
func (s *Server) Resume() {
	s.tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.tb.Fatal(err)
	}
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

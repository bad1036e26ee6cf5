package nativehost

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// PeerChecked says whether CheckPeer learns the other side's uid here.
const PeerChecked = true

// CheckPeer refuses a connection whose other end runs as another user
// (SO_PEERCRED).
func CheckPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("nativehost: the peer's credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("%w: uid %d, not %d", ErrOtherUser, cred.Uid, os.Getuid())
	}
	return nil
}

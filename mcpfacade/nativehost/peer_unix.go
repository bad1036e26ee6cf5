//go:build linux || darwin

package nativehost

import (
	"fmt"
	"net"
	"os"
)

// PeerChecked says whether CheckPeer learns the other side's uid here.
const PeerChecked = true

// CheckPeer refuses a connection whose other end runs as another user.
func CheckPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var uid uint32
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = peerUID(int(fd)) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("nativehost: the peer's credentials: %w", cerr)
	}
	if int(uid) != os.Getuid() {
		return fmt.Errorf("%w: uid %d, not %d", ErrOtherUser, uid, os.Getuid())
	}
	return nil
}
